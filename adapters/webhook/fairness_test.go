package webhook_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/internal/testenv"
)

// security.md, item 7: one account's slow receivers do not delay another's
// webhooks. Tenant A has eight endpoints that never answer while the test
// runs (each attempt would wait the full 10 s attempt timeout) and a
// backlog of deliveries older than tenant B's; B's one delivery still
// arrives while every one of A's requests is held. Before, a delivery loop
// waited for its whole claimed batch — A's — so B waited ≥ 10 s.
func TestSlowTenantDoesNotDelayAFastOne(t *testing.T) {
	t.Parallel()
	clock := app.SystemClock{}
	e := newEngine(t, testenv.SQLiteDSN(t), clock, app.WebhooksConfig{
		Workers: 1, ClaimBatch: 8, MaxInFlight: 24, PerEndpoint: 2, PerAccount: 16, PollInterval: 20 * time.Millisecond})
	slow := newReceiver(t, clock)
	slow.block = make(chan struct{})
	var secrets []string
	for i := range 8 {
		ep := e.endpoint(t, fmt.Sprintf("%s/a%d", slow.srv.URL, i), "charge.created")
		secrets = append(secrets, ep.Secret)
	}
	slow.setSecrets(secrets...)
	for range 4 {
		e.charge(t, "") // 4 charges × 8 endpoints: 32 deliveries for A
	}

	b := *e
	b.acct, b.scope = newAccount(t, e.db, clock.Now())
	fast := newReceiver(t, clock)
	fast.setSecrets(b.endpoint(t, fast.srv.URL+"/b", "charge.created").Secret)

	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.svc.Run(ctx); close(done) }()
	t.Cleanup(func() { stop(); <-done })
	t.Cleanup(func() { close(slow.block) }) // runs first: lets A's attempts end

	// A's receivers fill up first: at most 2 per endpoint, 16 in all.
	for range 16 {
		select {
		case <-slow.arrived:
		case <-time.After(5 * time.Second):
			t.Fatal("tenant A's deliveries did not start")
		}
	}
	b.charge(t, "")
	select {
	case <-fast.arrived:
	case <-time.After(5 * time.Second): // half the attempt timeout A's requests are held for
		t.Fatal("tenant B's delivery waited behind tenant A's slow receivers")
	}
	slow.mu.Lock()
	held := len(slow.got)
	slow.mu.Unlock()
	if held > 16 {
		t.Fatalf("tenant A had %d requests in flight, want at most 2 per endpoint (16)", held)
	}
}
