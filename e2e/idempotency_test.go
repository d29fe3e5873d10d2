package e2e_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/quitatest"
)

// countRows counts an account's rows in table (charges or
// idempotency_records), straight from the database.
func (e *env) countRows(t *testing.T, table, accountID string) int {
	t.Helper()
	n, err := e.srv.App.DB.Bun().NewSelect().Table(table).Where("account_id = ?", accountID).Count(context.Background())
	if err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return int(n)
}

// assertOneCharge checks that the account has exactly the charge id, in
// the database and in the list.
func (e *env) assertOneCharge(t *testing.T, a account, id string) {
	t.Helper()
	if n := e.countRows(t, "charges", a.AccountID); n != 1 {
		t.Errorf("%d charge rows, want 1", n)
	}
	if n := e.countRows(t, "idempotency_records", a.AccountID); n != 1 {
		t.Errorf("%d idempotency records, want 1", n)
	}
	l := a.test.list(t, "")
	if len(l.Data) != 1 || l.Data[0].ID != id {
		ids := []string{}
		for _, c := range l.Data {
			ids = append(ids, c.ID)
		}
		t.Errorf("list holds %v, want only %s", ids, id)
	}
}

// burst sends n identical creates at once and returns the answers.
func burst(t *testing.T, c *client, n int, key string, body any) []*response {
	t.Helper()
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		out   = make([]*response, n)
		errs  = make([]error, n)
	)
	for i := range n {
		wg.Go(func() {
			<-start
			out[i], errs[i] = c.send(http.MethodPost, "/charges", body, hdr{"Idempotency-Key": key})
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// checkBurst asserts that every answer is the one original 201 (replays
// byte-identical and marked) or a 409 idempotency_key_in_use with
// Retry-After, and returns the original body. wantCreated is how many
// answers must be the first-time creation (not marked as a replay).
func checkBurst(t *testing.T, rs []*response, wantCreated int) []byte {
	t.Helper()
	var (
		original        []byte
		created, inUse  int
		requestIDs      = map[string]bool{}
		replayedAnswers int
	)
	for _, r := range rs {
		rid := r.Header.Get("X-Request-Id")
		if rid == "" || requestIDs[rid] {
			t.Errorf("X-Request-Id %q missing or repeated", rid)
		}
		requestIDs[rid] = true
		switch r.Status {
		case http.StatusCreated:
			if original == nil {
				original = r.Body
			} else if !bytes.Equal(r.Body, original) {
				t.Errorf("two different 201 bodies:\n%s\n%s", original, r.Body)
			}
			if r.Header.Get("Idempotent-Replayed") == "true" {
				replayedAnswers++
			} else {
				created++
			}
		case http.StatusConflict:
			r.apiErr(t, http.StatusConflict, "idempotency_key_in_use", "")
			// Retry-After is the claim's remaining time: at most the 5 s TTL.
			if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 5 {
				t.Errorf("409 in use with Retry-After %q, want 1 to 5 s", r.Header.Get("Retry-After"))
			}
			inUse++
		default:
			t.Errorf("unexpected answer %d %s", r.Status, r.Body)
		}
	}
	if original == nil {
		t.Fatalf("no 201 among %d answers (%d in use)", len(rs), inUse)
	}
	if created != wantCreated {
		t.Errorf("%d answers not marked Idempotent-Replayed, want %d", created, wantCreated)
	}
	t.Logf("%d answers: %d created, %d replayed, %d in use", len(rs), created, replayedAnswers, inUse)
	return original
}

// 50 concurrent creates with one key make one charge.
func TestConcurrentCreatesOneKey(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b)
		a := e.newAccount(t, "Loja Burst")
		key := newKey()
		body := map[string]any{"amount": 2500, "payment_method": "pix", "description": "burst"}

		original := checkBurst(t, burst(t, a.test, 50, key, body), 1)
		var c charge
		(&response{&testkit.Response{Body: original}}).Decode(t, &c)
		e.assertOneCharge(t, a, c.ID)

		// A later retry is a replay of the very same bytes, with its own
		// request id.
		r1 := a.test.do(t, http.MethodPost, "/charges", body, hdr{"Idempotency-Key": key}).want(t, http.StatusCreated)
		r2 := a.test.do(t, http.MethodPost, "/charges", body, hdr{"Idempotency-Key": key}).want(t, http.StatusCreated)
		for _, r := range []*response{r1, r2} {
			if !bytes.Equal(r.Body, original) || r.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("retry: replayed %q body\n%s\nwant\n%s", r.Header.Get("Idempotent-Replayed"), r.Body, original)
			}
		}
		if r1.Header.Get("X-Request-Id") == r2.Header.Get("X-Request-Id") {
			t.Error("two replays share an X-Request-Id")
		}
		// The same body, formatted differently, is the same request.
		reformatted := "{\n  \"description\": \"burst\",\n  \"payment_method\": \"pix\",  \"amount\": 2500 }"
		r3 := a.test.do(t, http.MethodPost, "/charges", reformatted, hdr{"Idempotency-Key": key}).want(t, http.StatusCreated)
		if !bytes.Equal(r3.Body, original) {
			t.Errorf("reformatted body not replayed: %s", r3.Body)
		}

		// Same key, other request: 409 idempotency_key_reused, nothing new.
		for _, tc := range []struct {
			name, path string
			body       map[string]any
		}{
			{"other amount", "/charges", map[string]any{"amount": 2501, "payment_method": "pix", "description": "burst"}},
			{"other description", "/charges", map[string]any{"amount": 2500, "payment_method": "pix", "description": "Burst"}},
			{"other path", "/pix/charges", body},
		} {
			t.Run(tc.name, func(t *testing.T) {
				a.test.do(t, http.MethodPost, tc.path, tc.body, hdr{"Idempotency-Key": key}).
					apiErr(t, http.StatusConflict, "idempotency_key_reused", "")
			})
		}
		e.assertOneCharge(t, a, c.ID)

		// The key is scoped to account and mode: the live key and another
		// account create their own charges with it.
		l := a.live.do(t, http.MethodPost, "/charges", body, hdr{"Idempotency-Key": key}).want(t, http.StatusCreated)
		if l.Header.Get("Idempotent-Replayed") != "" || l.charge(t).ID == c.ID {
			t.Errorf("live key replayed the test charge: %s", l.Body)
		}
		other := e.newAccount(t, "Loja Outra")
		o := other.test.do(t, http.MethodPost, "/charges", body, hdr{"Idempotency-Key": key}).want(t, http.StatusCreated)
		if o.Header.Get("Idempotent-Replayed") != "" || o.charge(t).ID == c.ID {
			t.Errorf("another account replayed the charge: %s", o.Body)
		}
	})
}

// redisKeys lists the keys under prefix.
func redisKeys(t *testing.T, rdb *redis.Client, prefix string) []string {
	t.Helper()
	var keys []string
	iter := rdb.Scan(context.Background(), 0, prefix+"*", 1000).Iterator()
	for iter.Next(context.Background()) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatalf("scan redis: %v", err)
	}
	return keys
}

func newRedis(t *testing.T, rawURL string) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// replayAfterLoss creates a charge, runs lose (which wipes the cache),
// and checks that retries still answer with the original charge.
func replayAfterLoss(t *testing.T, e *env, lose func()) {
	t.Helper()
	a := e.newAccount(t, "Loja Flush")
	key := newKey()
	body := map[string]any{"amount": 4200, "payment_method": "pix"}
	first := a.test.do(t, http.MethodPost, "/charges", body, hdr{"Idempotency-Key": key}).want(t, http.StatusCreated)
	c := first.charge(t)

	lose()

	// A burst of retries after the loss: one of them re-claims the key in
	// the cache, finds the durable record and answers the original.
	checkBurst(t, burst(t, a.test, 10, key, body), 0)
	r := a.test.do(t, http.MethodPost, "/charges", body, hdr{"Idempotency-Key": key}).want(t, http.StatusCreated)
	if !bytes.Equal(r.Body, first.Body) || r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay after flush:\n%s\nwant\n%s", r.Body, first.Body)
	}
	e.assertOneCharge(t, a, c.ID)

	// The database still knows the fingerprint.
	lose()
	a.test.do(t, http.MethodPost, "/charges", map[string]any{"amount": 4300, "payment_method": "pix"},
		hdr{"Idempotency-Key": key}).apiErr(t, http.StatusConflict, "idempotency_key_reused", "")
	e.assertOneCharge(t, a, c.ID)
}

// Flushing Redis loses the fast path only: a retry still returns the
// original charge and never makes a second one.
func TestReplayAfterRedisFlush(t *testing.T) {
	t.Parallel()

	t.Run("prefix deleted", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, backends[0])
		rdb := newRedis(t, e.redisURL)
		replayAfterLoss(t, e, func() {
			keys := redisKeys(t, rdb, e.redisPrefix)
			if len(keys) == 0 {
				t.Fatalf("no Redis keys under %s: the server is not using Redis", e.redisPrefix)
			}
			if err := rdb.Del(context.Background(), keys...).Err(); err != nil {
				t.Fatal(err)
			}
		})
	})

	t.Run("FLUSHDB on a database of its own", func(t *testing.T) {
		t.Parallel()
		url, owner := claimRedisDB(t)
		e := newEnv(t, backends[0], func(o *quitatest.Options) { o.RedisURL = url })
		rdb := newRedis(t, url)
		replayAfterLoss(t, e, func() {
			if n, err := rdb.DBSize(context.Background()).Result(); err != nil || n <= 1 {
				t.Fatalf("DBSIZE of the claimed database = %d, %v: the server is not using it", n, err)
			}
			// Everything goes at once but the claim, so no other run takes
			// the index meanwhile.
			if _, err := rdb.TxPipelined(context.Background(), func(p redis.Pipeliner) error {
				p.FlushDB(context.Background())
				p.Set(context.Background(), redisOwnerKey, owner, 30*time.Minute)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		})
	})

	t.Run("redis unreachable", func(t *testing.T) {
		t.Parallel()
		// The database's unique key is the guarantee on its own.
		e := newEnv(t, backends[0], func(o *quitatest.Options) { o.RedisURL = "redis://127.0.0.1:1/0?max_retries=-1&dial_timeout=200ms" })
		a := e.newAccount(t, "Loja Sem Redis")
		key := newKey()
		body := map[string]any{"amount": 3100, "payment_method": "pix"}
		original := checkBurst(t, burst(t, a.test, 20, key, body), 1)
		var c charge
		(&response{&testkit.Response{Body: original}}).Decode(t, &c)
		e.assertOneCharge(t, a, c.ID)
	})
}

// redisOwnerKey marks a Redis database index a test run has claimed.
const redisOwnerKey = "quita:e2e:owner"

// claimRedisDB claims an empty database index of the test Redis server
// (15 down to 10) by writing redisOwnerKey with SET NX, so a test that
// flushes a whole database flushes one nobody else uses, and empties it
// when t ends if the claim is still the test's. It returns the index's URL
// and the claim's value.
func claimRedisDB(t *testing.T) (string, string) {
	t.Helper()
	base, _ := testenv.RedisURL(t)
	owner := newKey()
	ctx := context.Background()
	for db := 15; db >= 10; db-- {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		u.Path = "/" + itoa(int64(db))
		rdb := newRedis(t, u.String())
		if n, err := rdb.DBSize(ctx).Result(); err != nil || n != 0 {
			continue
		}
		if ok, err := rdb.SetNX(ctx, redisOwnerKey, owner, 30*time.Minute).Result(); err != nil || !ok {
			continue
		}
		t.Cleanup(func() {
			if v, _ := rdb.Get(ctx, redisOwnerKey).Result(); v == owner {
				rdb.FlushDB(ctx)
			}
		})
		return u.String(), owner
	}
	t.Fatal("redis: no empty database index in 10..15 to claim")
	return "", ""
}

// Redis keeps that a money write's key was answered, not the answer: the
// key's value is a few bytes with nothing of the charge in it, and a retry is answered from the durable record, byte for byte.
func TestRedisKeepsNoAnswerOfAMoneyWrite(t *testing.T) {
	t.Parallel()
	e := newEnv(t, backends[0])
	rdb := newRedis(t, e.redisURL)
	a := e.newAccount(t, "Loja Resposta")
	key := newKey()
	body := map[string]any{"amount": 4400, "payment_method": "pix", "customer": map[string]any{"name": "Maria da Silva"}}
	first := a.test.do(t, http.MethodPost, "/charges", body, hdr{"Idempotency-Key": key}).want(t, http.StatusCreated)
	c := first.charge(t)

	var claim []byte
	for _, k := range redisKeys(t, rdb, e.redisPrefix) {
		if bytes.HasSuffix([]byte(k), []byte(":"+key)) {
			v, err := rdb.Get(context.Background(), k).Bytes()
			if err != nil {
				t.Fatal(err)
			}
			claim = v
		}
	}
	if claim == nil {
		t.Fatalf("no Redis value for the key under %s", e.redisPrefix)
	}
	if len(claim) > 128 || bytes.Contains(claim, []byte(c.ID[3:])) || bytes.Contains(claim, []byte("Maria")) {
		t.Errorf("the key's Redis value is %d bytes (%q): want the mark of an answer, not the answer", len(claim), claim)
	}
	for range 2 {
		r := a.test.do(t, http.MethodPost, "/charges", body, hdr{"Idempotency-Key": key}).want(t, http.StatusCreated)
		if !bytes.Equal(r.Body, first.Body) || r.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay:\n%s\nwant\n%s", r.Body, first.Body)
		}
	}
	a.test.do(t, http.MethodPost, "/charges", map[string]any{"amount": 4500, "payment_method": "pix"},
		hdr{"Idempotency-Key": key}).apiErr(t, http.StatusConflict, "idempotency_key_reused", "")
	e.assertOneCharge(t, a, c.ID)
}

// Live Pix creates through Redis: the cob intents of concurrent creates
// are recorded and dropped in batches (app/batcher.go), and once every
// charge has committed none is left in the set; each create's key then
// replays its own charge.
func TestLiveCreatesLeaveNoCobIntent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, backends[0])
	rdb := newRedis(t, e.redisURL)
	a := e.newAccount(t, "Loja Ao Vivo")
	const n = 40
	keys := make([]string, n)
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		keys[i] = newKey()
		wg.Go(func() {
			r, err := a.live.send(http.MethodPost, "/charges", pixBody(int64(1000+i)), hdr{"Idempotency-Key": keys[i]})
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = r.want(t, http.StatusCreated).charge(t).ID
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	set := idempotency.CobIntentKey(e.redisPrefix, a.AccountID)
	var left int64
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var err error
		if left, err = rdb.ZCard(context.Background(), set).Result(); err != nil {
			t.Fatal(err)
		}
		if left == 0 || time.Now().After(deadline) {
			break
		}
	}
	if left != 0 {
		t.Fatalf("%d cob intents left in %s after every create committed", left, set)
	}
	for i, k := range keys {
		r := a.live.do(t, http.MethodPost, "/charges", pixBody(int64(1000+i)), hdr{"Idempotency-Key": k}).want(t, http.StatusCreated)
		if got := r.charge(t).ID; got != ids[i] || r.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("key %d replayed %s (replayed %q), want %s", i, got, r.Header.Get("Idempotent-Replayed"), ids[i])
		}
	}
}
