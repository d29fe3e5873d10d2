package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/quitatest"
)

// keyed adds an Idempotency-Key to the credentials in h.
func keyed(h testkit.Header, key string) testkit.Header {
	out := testkit.Header{"Idempotency-Key": key}
	for k, v := range h {
		out[k] = v
	}
	return out
}

func wantReplay(t *testing.T, first, again *testkit.Response) {
	t.Helper()
	if again.Status != first.Status || again.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.Body, first.Body) {
		t.Fatalf("retry = %d replayed=%q %s; want the first answer (%d %s) replayed byte for byte",
			again.Status, again.Header.Get("Idempotent-Replayed"), again.Body, first.Status, first.Body)
	}
}

func countEndpoints(t *testing.T, srv *quitatest.Server, apikey string) int {
	t.Helper()
	r := apiCall(t, http.MethodGet, srv.BaseURL+"/webhooks/endpoints", apikey, nil)
	wantStatus(t, r, http.StatusOK, "")
	data, _ := r.Body["data"].([]any)
	return len(data)
}

const endpointBody = `{"url":"http://127.0.0.1:9/hooks","events":["charge.paid","charge.expired"]}`

// A registration retried with its key (a timed-out first attempt) gets the
// first answer — the same endpoint id and signing secret, byte for byte —
// and registers nothing more; the key cannot be reused for another
// request; a refused (4xx) attempt records nothing.
func TestKeyedWriteReplaysAnEndpointRegistration(t *testing.T) {
	t.Parallel()
	for _, d := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", testenv.SQLiteDSN}, {"postgres", testenv.PostgresDSN}} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			srv := quitatest.NewServer(t, quitatest.Options{DatabaseURL: d.dsn(t)})
			acct := srv.NewAccount(t, "Loja Chaves")
			url := srv.BaseURL + "/webhooks/endpoints"
			test := testkit.Header{"apikey": acct.TestKey}

			first := testkit.Do(t, http.MethodPost, url, endpointBody, keyed(test, "register-endpoint-0001"))
			if first.Status != http.StatusCreated || first.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("first: %d replayed=%q %s", first.Status, first.Header.Get("Idempotent-Replayed"), first.Body)
			}
			var ep struct{ ID, Secret string }
			if err := json.Unmarshal(first.Body, &ep); err != nil || ep.ID == "" || len(ep.Secret) != 64 {
				t.Fatalf("first answer %s: %v", first.Body, err)
			}
			// The same request, formatted otherwise: the canonical fingerprint matches.
			again := testkit.Do(t, http.MethodPost, url, "{ \"events\": [\"charge.paid\", \"charge.expired\"],\n \"url\": \"http://127.0.0.1:9/hooks\" }",
				keyed(test, "register-endpoint-0001"))
			wantReplay(t, first, again)
			if n := countEndpoints(t, srv, acct.TestKey); n != 1 {
				t.Fatalf("%d endpoints after a retried registration, want 1", n)
			}

			other := testkit.Do(t, http.MethodPost, url, `{"url":"http://127.0.0.1:9/other","events":["charge.paid"]}`,
				keyed(test, "register-endpoint-0001"))
			if e := other.Error(); other.Status != http.StatusConflict || e.Type != "idempotency_error" || e.Code != "idempotency_key_reused" {
				t.Fatalf("same key, other body: %d %s", other.Status, other.Body)
			}

			// The key is scoped by mode: the live key's request is its own.
			live := testkit.Do(t, http.MethodPost, url, endpointBody, keyed(testkit.Header{"apikey": acct.LiveKey}, "register-endpoint-0001"))
			if live.Status != http.StatusCreated || live.Header.Get("Idempotent-Replayed") != "" || bytes.Equal(live.Body, first.Body) {
				t.Fatalf("live mode, same key: %d replayed=%q", live.Status, live.Header.Get("Idempotent-Replayed"))
			}

			// A refused request records nothing: fixed, it runs under the same key.
			bad := testkit.Do(t, http.MethodPost, url, `{"url":"ftp://127.0.0.1/x","events":["charge.paid"]}`, keyed(test, "register-endpoint-0002"))
			if bad.Status != http.StatusBadRequest {
				t.Fatalf("bad url: %d %s", bad.Status, bad.Body)
			}
			fixed := testkit.Do(t, http.MethodPost, url, endpointBody, keyed(test, "register-endpoint-0002"))
			if fixed.Status != http.StatusCreated || fixed.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("after a 400, same key: %d %s", fixed.Status, fixed.Body)
			}
			if n := countEndpoints(t, srv, acct.TestKey); n != 2 {
				t.Fatalf("%d test endpoints, want 2", n)
			}

			// The key rules of the money writes: 8 to 128 characters.
			for _, k := range []string{"", "short", strings.Repeat("k", 129)} {
				r := testkit.Do(t, http.MethodPost, url, endpointBody, keyed(test, k))
				if e := r.Error(); r.Status != http.StatusBadRequest || e.Code != "idempotency_key_invalid" || e.Param != "Idempotency-Key" {
					t.Errorf("key %q: %d %s", k, r.Status, r.Body)
				}
			}
			if n := countEndpoints(t, srv, acct.TestKey); n != 2 {
				t.Fatalf("%d test endpoints after refused keys, want 2", n)
			}
		})
	}
}

// Requests with one key at once: exactly one runs; each other one is
// answered 409 idempotency_key_in_use (with Retry-After) or, once the
// first has finished, its answer replayed.
func TestKeyedWriteConcurrentRequestsRunOnce(t *testing.T) {
	t.Parallel()
	for _, d := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", testenv.SQLiteDSN}, {"postgres", testenv.PostgresDSN}} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			srv := quitatest.NewServer(t, quitatest.Options{DatabaseURL: d.dsn(t)})
			acct := srv.NewAccount(t, "Loja Concorrente")
			const n = 12
			var (
				wg    sync.WaitGroup
				start = make(chan struct{})
				got   [n]*testkit.Response
				errs  [n]error
			)
			for i := range n {
				wg.Go(func() {
					<-start
					got[i], errs[i] = testkit.Send(nil, http.MethodPost, srv.BaseURL+"/webhooks/endpoints", endpointBody,
						testkit.Header{"apikey": acct.TestKey, "Idempotency-Key": "concurrent-endpoint-01"})
				})
			}
			close(start)
			wg.Wait()

			var ran *testkit.Response
			for i, r := range got {
				if errs[i] != nil {
					t.Fatal(errs[i])
				}
				switch {
				case r.Status == http.StatusCreated && r.Header.Get("Idempotent-Replayed") == "":
					if ran != nil {
						t.Fatalf("two requests ran: %s and %s", ran.Body, r.Body)
					}
					ran = r
				case r.Status == http.StatusCreated:
				case r.Status == http.StatusConflict && r.Error().Code == "idempotency_key_in_use" && r.Header.Get("Retry-After") != "":
				default:
					t.Fatalf("answer %d: %d %v %s", i, r.Status, r.Header, r.Body)
				}
			}
			if ran == nil {
				t.Fatal("no request ran")
			}
			for _, r := range got {
				if r.Status == http.StatusCreated && !bytes.Equal(r.Body, ran.Body) {
					t.Fatalf("a replay differs: %s vs %s", r.Body, ran.Body)
				}
			}
			if c := countEndpoints(t, srv, acct.TestKey); c != 1 {
				t.Fatalf("%d endpoints from %d requests with one key, want 1", c, n)
			}
		})
	}
}

// A 503 (the acquirer down) is not recorded: the retry with the same key
// runs and settles the charge; only then is the answer replayed.
func TestKeyedWriteDoesNotRecordA5xx(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	acct := srv.NewAccount(t, "Loja Queda")
	id := newTestCharge(t, srv, acct.TestKey, 1990)
	url := srv.BaseURL + "/test_helpers/charges/" + id + "/pay"
	h := testkit.Header{"apikey": acct.TestKey, "Idempotency-Key": "pay-while-down-0001"}

	srv.Sandbox.SetDown(true)
	down := testkit.Do(t, http.MethodPost, url, nil, h)
	srv.Sandbox.SetDown(false)
	if down.Status != http.StatusServiceUnavailable {
		t.Fatalf("pay with the acquirer down: %d %s", down.Status, down.Body)
	}
	paid := testkit.Do(t, http.MethodPost, url, nil, h)
	if paid.Status != http.StatusOK || paid.Header.Get("Idempotent-Replayed") != "" || !strings.Contains(string(paid.Body), `"status":"paid"`) {
		t.Fatalf("retry after the 503: %d replayed=%q %s", paid.Status, paid.Header.Get("Idempotent-Replayed"), paid.Body)
	}
	// Without the key a second pay is 409 charge_not_pending; with it, the answer.
	wantReplay(t, paid, testkit.Do(t, http.MethodPost, url, nil, h))
}

// The dashboard's key issue and the secret rotations replay through Redis
// — on another process too — and Redis holds none of the one-time secrets
// in clear, nor the merchant's key.
func TestKeyedWriteSecretsAreSealedInRedis(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := e.server(nil)
	m := e.account(srv, "Loja Selada")
	token := e.login(srv, m)
	dash := testkit.Header{"Authorization": "Bearer " + token}
	test := testkit.Header{"apikey": m.TestKey}

	countKeys := func() int {
		var list struct{ Data []any }
		call(t, http.MethodGet, srv.BaseURL+"/api-keys", bearerHdr(token), "").Decode(t, &list)
		return len(list.Data)
	}
	keysBefore := countKeys()
	issue := func(s *quitatest.Server) *testkit.Response {
		return testkit.Do(t, http.MethodPost, s.BaseURL+"/api-keys", `{"label":"erp","test":true}`, keyed(dash, "issue-key-erp-000001"))
	}
	issued := issue(srv)
	if issued.Status != http.StatusCreated {
		t.Fatalf("issue: %d %s", issued.Status, issued.Body)
	}
	e.secretsIn(issued.Body)
	var key struct{ APIKey string }
	_ = json.Unmarshal(issued.Body, &key)

	endpoint := testkit.Do(t, http.MethodPost, srv.BaseURL+"/webhooks/endpoints", endpointBody, keyed(test, "register-endpoint-sealed"))
	if endpoint.Status != http.StatusCreated {
		t.Fatalf("register: %d %s", endpoint.Status, endpoint.Body)
	}
	e.secretsIn(endpoint.Body)
	var ep struct{ ID, Secret string }
	_ = json.Unmarshal(endpoint.Body, &ep)

	rotateURL := "/webhooks/endpoints/" + ep.ID + "/rotate-secret"
	rotated := testkit.Do(t, http.MethodPost, srv.BaseURL+rotateURL, nil, keyed(test, "rotate-endpoint-sealed"))
	if rotated.Status != http.StatusOK {
		t.Fatalf("rotate: %d %s", rotated.Status, rotated.Body)
	}
	e.secretsIn(rotated.Body)
	var rot struct{ Secret string }
	_ = json.Unmarshal(rotated.Body, &rot)

	// Another process on the same database, Redis and secrets replays all three.
	other := e.server(nil)
	wantReplay(t, issued, issue(other))
	wantReplay(t, endpoint, testkit.Do(t, http.MethodPost, other.BaseURL+"/webhooks/endpoints", endpointBody, keyed(test, "register-endpoint-sealed")))
	wantReplay(t, rotated, testkit.Do(t, http.MethodPost, other.BaseURL+rotateURL, nil, keyed(test, "rotate-endpoint-sealed")))
	if n := countKeys(); n != keysBefore+1 {
		t.Fatalf("%d keys after an issue and its replay, want %d", n, keysBefore+1)
	}

	opts, err := redis.ParseURL(e.redis)
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(opts)
	defer client.Close()
	ctx := context.Background()
	names, err := client.Keys(ctx, e.prefix+"*").Result()
	if err != nil || len(names) < 3 {
		t.Fatalf("Redis keys under the prefix: %v, %v", names, err)
	}
	for _, name := range names {
		if client.Type(ctx, name).Val() != "string" {
			continue
		}
		raw, err := client.Get(ctx, name).Bytes()
		if err != nil {
			t.Fatal(err)
		}
		for what, s := range map[string]string{"API key": key.APIKey, "endpoint secret": ep.Secret, "rotated secret": rot.Secret, "endpoint id": ep.ID} {
			if s == "" || bytes.Contains(raw, []byte(s)) {
				t.Errorf("Redis %s holds the %s %q in clear", name, what, s)
			}
		}
		for _, idem := range []string{"issue-key-erp", "register-endpoint-sealed", "rotate-endpoint-sealed"} {
			if strings.Contains(name, idem) {
				t.Errorf("Redis key %s names %q", name, idem)
			}
		}
	}
}

// Logout is never answered from a record: a later session of the same user
// logging out under a key an earlier logout used is signed out too.
func TestKeyedWriteLogoutIsNeverReplayed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := e.server(nil)
	m := e.account(srv, "Loja Saída")
	hdr := func(token string) map[string]string {
		h := bearerHdr(token)
		h["Idempotency-Key"] = "logout-key-0001"
		return h
	}
	first := e.login(srv, m)
	if r := call(t, http.MethodPost, srv.BaseURL+"/auth/logout", hdr(first), ""); r.Status != http.StatusNoContent {
		t.Fatalf("first logout: %d %s", r.Status, r.Body)
	}
	second := e.login(srv, m)
	r := call(t, http.MethodPost, srv.BaseURL+"/auth/logout", hdr(second), "")
	if r.Status != http.StatusNoContent || r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("second logout: %d replayed=%q %s", r.Status, r.Header.Get("Idempotent-Replayed"), r.Body)
	}
	expectError(t, call(t, http.MethodGet, srv.BaseURL+"/api-keys", bearerHdr(second), ""), 401, "authentication_error", "token_invalid")
}

// A keyed body larger than any of these routes take is fingerprinted as
// sent, not parsed: the same JSON spaced differently is another request,
// where a small body spaced differently is the same one.
func TestKeyedWriteLargeBodyIsHashedAsSent(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	acct := srv.NewAccount(t, "Loja Grande")
	url := srv.BaseURL + "/webhooks/endpoints"
	post := func(key, body string) *testkit.Response {
		return testkit.Do(t, http.MethodPost, url, []byte(body), keyed(testkit.Header{"apikey": acct.TestKey, "Content-Type": "application/json"}, key))
	}
	small := post("small-body-0001", endpointBody)
	wantReplay(t, small, post("small-body-0001", strings.Replace(endpointBody, `,"events"`, ` , "events"`, 1)))

	pad := strings.Repeat(" ", 70<<10)
	large := endpointBody[:len(endpointBody)-1] + pad + "}"
	first := post("large-body-0001", large)
	if first.Status != http.StatusCreated {
		t.Fatalf("large body: %d %s", first.Status, first.Body)
	}
	wantReplay(t, first, post("large-body-0001", large))
	respaced := endpointBody[:len(endpointBody)-1] + pad + " }"
	again := post("large-body-0001", respaced)
	if again.Status != http.StatusConflict || !strings.Contains(string(again.Body), "idempotency_key_reused") {
		t.Fatalf("re-spaced large body under the same key: %d %s; want 409 idempotency_key_reused", again.Status, again.Body)
	}
}
