package e2e_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for the test's own admin connection

	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/quitatest"
)

// terminateBackends ends every other session on the server's database, as
// a Postgres restart or an operator's pg_terminate_backend does.
func terminateBackends(t *testing.T, admin *sql.DB) int {
	t.Helper()
	var n int
	err := admin.QueryRow(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&n)
	if err != nil {
		t.Fatalf("terminate backends: %v", err)
	}
	return n
}

// security.md, item 20: when Postgres drops quitad's
// connections, the pool recovers before the next statement is sent (no
// request fails after the drop), and while connections keep dropping under
// load every answer is 201 or 503 with Retry-After — never a 500 — and the
// retried keys each end with exactly one charge.
func TestPostgresConnectionLoss(t *testing.T) {
	t.Parallel()
	var dsn string
	e := newEnv(t, backends[0], func(o *quitatest.Options) { dsn = o.DatabaseURL })
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	admin.SetMaxOpenConns(1)
	a := e.newAccount(t, "Loja Queda")

	// Warm the pool, drop every connection, then create one by one.
	for range 5 {
		a.test.mustCreate(t, pixBody(1000))
	}
	var pids []int64
	rows, err := admin.Query(`WITH others AS MATERIALIZED (SELECT pid FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid())
		SELECT pid FROM others WHERE pg_terminate_backend(pid)`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var pid int64
		if err := rows.Scan(&pid); err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
	}
	if rows.Close(); len(pids) == 0 {
		t.Fatal("no quitad connection to terminate")
	}
	// The drop is over once the terminated sessions are gone. New ones
	// may already be there: background workers reconnect on their own.
	list := make([]string, len(pids))
	for i, p := range pids {
		list[i] = strconv.FormatInt(p, 10)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var left int
		if err := admin.QueryRow(`SELECT count(*) FROM pg_stat_activity
			WHERE pid IN (` + strings.Join(list, ",") + `)`).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d backends outlived pg_terminate_backend", left)
		}
	}
	for i := range 20 {
		if r := a.test.create(t, "/charges", pixBody(1000)); r.Status != http.StatusCreated {
			t.Fatalf("create %d after the drop: %d %s", i, r.Status, r.Body)
		}
	}

	// Connections dropping over and over under concurrent load.
	ctx, stop := context.WithCancel(t.Context())
	var dropper sync.WaitGroup
	dropper.Go(func() {
		for ctx.Err() == nil {
			terminateBackends(t, admin)
			time.Sleep(15 * time.Millisecond)
		}
	})
	type outcome struct {
		key    string
		status int
	}
	var (
		mu       sync.Mutex
		outcomes []outcome
		clients  sync.WaitGroup
	)
	for c := range 4 {
		clients.Go(func() {
			for i := range 25 {
				key := fmt.Sprintf("drop-%d-%03d", c, i)
				r, err := a.test.send(http.MethodPost, "/charges", pixBody(1000), hdr{"Idempotency-Key": key})
				if err != nil {
					t.Errorf("transport: %v", err)
					return
				}
				if r.Status == http.StatusServiceUnavailable {
					if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 {
						t.Errorf("503 without Retry-After: %s", r.Body)
					}
				}
				mu.Lock()
				outcomes = append(outcomes, outcome{key, r.Status})
				mu.Unlock()
			}
		})
	}
	clients.Wait()
	stop()
	dropper.Wait()
	counts := map[int]int{}
	for _, o := range outcomes {
		counts[o.status]++
		if o.status != http.StatusCreated && o.status != http.StatusServiceUnavailable {
			t.Errorf("key %s answered %d during the drops", o.key, o.status)
		}
	}
	t.Logf("answers while connections dropped: %v", counts)
	// Every key, retried after the storm, ends with one charge.
	ids := map[string]bool{}
	for _, o := range outcomes {
		r := a.test.do(t, http.MethodPost, "/charges", pixBody(1000), hdr{"Idempotency-Key": o.key})
		if r.Status != http.StatusCreated {
			t.Fatalf("retry of %s: %d %s", o.key, r.Status, r.Body)
		}
		ids[r.charge(t).ID] = true
	}
	if len(ids) != len(outcomes) {
		t.Fatalf("%d keys made %d charges", len(outcomes), len(ids))
	}
	if r := a.test.do(t, http.MethodGet, e.srv.URL+"/readyz", nil, nil); r.Status != http.StatusOK {
		t.Fatalf("readyz after recovery: %d %s", r.Status, r.Body)
	}
}

// security.md, item 8: Redis is optional, so it is not part of readiness: with
// Redis unreachable /readyz stays 200 and /healthz reports it.
func TestRedisIsNotPartOfReadiness(t *testing.T) {
	t.Parallel()
	e := newEnv(t, backends[0], func(o *quitatest.Options) { o.RedisURL = "redis://127.0.0.1:1/0" })
	c := e.client("")
	if r := c.do(t, http.MethodGet, e.srv.URL+"/readyz", nil, nil); r.Status != http.StatusOK ||
		!strings.Contains(string(r.Body), `"database":"ok"`) || strings.Contains(string(r.Body), "redis") {
		t.Fatalf("readyz with Redis down: %d %s", r.Status, r.Body)
	}
	if r := c.do(t, http.MethodGet, e.srv.URL+"/healthz", nil, nil); r.Status != http.StatusOK ||
		!strings.Contains(string(r.Body), `"redis":"unavailable"`) {
		t.Fatalf("healthz with Redis down: %d %s", r.Status, r.Body)
	}
	a := e.newAccount(t, "Loja Sem Redis")
	a.test.mustCreate(t, pixBody(1000))
}

// security.md, item 8: a Redis that accepts connections and never answers is
// worse than a refused one; quitad still creates, replays and refuses a
// reused key from the database, and /readyz stays 200.
func TestHangingRedis(t *testing.T) {
	t.Parallel()
	hanging, _ := testenv.HangingServer(t)
	e := newEnv(t, backends[0], func(o *quitatest.Options) { o.RedisURL = "redis://" + hanging + "/0" })
	a := e.newAccount(t, "Loja Redis Mudo")
	for i := range 10 {
		key := fmt.Sprintf("hanging-%02d", i)
		first := a.test.do(t, http.MethodPost, "/charges", pixBody(1000), hdr{"Idempotency-Key": key}).want(t, http.StatusCreated)
		again := a.test.do(t, http.MethodPost, "/charges", pixBody(1000), hdr{"Idempotency-Key": key}).want(t, http.StatusCreated)
		if again.Header.Get("Idempotent-Replayed") != "true" || again.charge(t).ID != first.charge(t).ID {
			t.Fatalf("replay %d: %s", i, again.Body)
		}
		a.test.do(t, http.MethodPost, "/charges", pixBody(2000), hdr{"Idempotency-Key": key}).apiErr(t, http.StatusConflict, "idempotency_key_reused", "")
	}
	if r := a.test.do(t, http.MethodGet, e.srv.URL+"/readyz", nil, nil); r.Status != http.StatusOK {
		t.Fatalf("readyz: %d %s", r.Status, r.Body)
	}
}

// The velocity guard's count is atomic. 50 concurrent
// creates for one payer, each with its own key, against the default limit
// of 20 per hour: exactly 20 are created and 30 refused; retrying an
// admitted key replays and does not count again.
func TestVelocityGuardUnderConcurrency(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b)
		a := e.newAccount(t, "Loja Velocidade")
		body := map[string]any{"amount": 1000, "payment_method": "pix", "expected_payer_tax_id": "52998224725",
			"customer": map[string]any{"name": "Joao Souza", "document": "52998224725"}}
		var (
			mu      sync.Mutex
			status  = map[int]int{}
			created []string
			wg      sync.WaitGroup
		)
		for i := range 50 {
			wg.Go(func() {
				key := fmt.Sprintf("velocity-%s-%02d", b.name, i)
				r, err := a.test.send(http.MethodPost, "/charges", body, hdr{"Idempotency-Key": key})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				status[r.Status]++
				if r.Status == http.StatusCreated {
					created = append(created, key)
				} else if !strings.Contains(string(r.Body), `"code":"fraud.velocity_exceeded"`) {
					t.Errorf("refusal: %d %s", r.Status, r.Body)
				}
			})
		}
		wg.Wait()
		if status[http.StatusCreated] != 20 || status[http.StatusForbidden] != 30 {
			t.Fatalf("answers %v, want 20 created and 30 refused", status)
		}
		r := a.test.do(t, http.MethodPost, "/charges", body, hdr{"Idempotency-Key": created[0]}).want(t, http.StatusCreated)
		if r.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("retry of an admitted key: %s", r.Body)
		}
	})
}
