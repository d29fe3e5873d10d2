package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
)

// A receiver that fails three times and then succeeds: one DELIVERED
// delivery with four attempts, every request signed, every attempt with
// its own delivery id.
func TestRetriesUntilDelivered(t *testing.T) {
	t.Parallel()
	for name, dsn := range dialects(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clock := app.SystemClock{}
			e := newEngine(t, dsn(t), clock, app.WebhooksConfig{})
			rc := newReceiver(t, clock)
			rc.answer = func(n int, _ *http.Request) int {
				if n <= 3 {
					return http.StatusInternalServerError
				}
				return http.StatusOK
			}
			ep := e.endpoint(t, rc.srv.URL+"/hooks", "charge.created")
			rc.setSecrets(ep.Secret)
			e.charge(t, "")
			e.drain(t, t.Context())

			ds := e.deliveries(t, ports.DeliveryQuery{})
			if len(ds) != 1 {
				t.Fatalf("%d deliveries, want 1", len(ds))
			}
			d := ds[0]
			if d.Status != domain.DeliveryDelivered || d.Attempts != 4 || d.DeliveredAt == nil || d.LastStatusCode == nil || *d.LastStatusCode != 200 {
				t.Fatalf("delivery %+v", d)
			}
			got := rc.deliveries()
			if len(got) != 4 || rc.bad.Load() != 0 {
				t.Fatalf("receiver saw %d requests (%d bad), want 4", len(got), rc.bad.Load())
			}
			ids := map[string]bool{}
			for _, g := range got {
				ids[g.deliveryID] = true
				if g.eventType != "charge.created" || string(g.body) != string(d.Payload) {
					t.Fatalf("request %+v does not carry the payload as stored", g)
				}
			}
			if len(ids) != 4 {
				t.Fatalf("delivery ids not unique per attempt: %v", ids)
			}
		})
	}
}

// A worker killed mid-attempt loses nothing: after its lease the delivery
// is made again by another worker, and there is exactly one DELIVERED
// record.
func TestKilledWorkerLosesNothing(t *testing.T) {
	t.Parallel()
	for name, dsn := range dialects(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			clock := testkit.NewClock(time.Now().UTC())
			e := newEngine(t, dsn(t), clock, app.WebhooksConfig{Lease: time.Minute})
			rc := newReceiver(t, clock)
			ep := e.endpoint(t, rc.srv.URL, "charge.created")
			rc.setSecrets(ep.Secret)
			rc.block = make(chan struct{})
			e.charge(t, "")
			if _, err := e.svc.DispatchOnce(t.Context()); err != nil {
				t.Fatal(err)
			}

			ctx, kill := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { _, err := e.svc.DeliverOnce(ctx); done <- err }()
			<-rc.arrived // the attempt reached the receiver...
			kill()       // ...and its worker dies before the answer
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			ds := e.deliveries(t, ports.DeliveryQuery{})
			if len(ds) != 1 || ds[0].Status != domain.DeliveryProcessing {
				t.Fatalf("after the kill: %+v", ds)
			}
			rc.mu.Lock()
			rc.block = nil
			rc.mu.Unlock()
			// Another worker finds nothing while the lease holds...
			if n, _ := e.svc.DeliverOnce(t.Context()); n != 0 {
				t.Fatalf("claimed a leased delivery")
			}
			// ...and takes it over once the lease ran out.
			clock.Advance(time.Minute + time.Second)
			if n, err := e.svc.DeliverOnce(t.Context()); n != 1 || err != nil {
				t.Fatalf("takeover claimed %d, %v", n, err)
			}
			ds = e.deliveries(t, ports.DeliveryQuery{})
			if len(ds) != 1 || ds[0].Status != domain.DeliveryDelivered || ds[0].Attempts != 2 {
				t.Fatalf("after takeover: %+v", ds)
			}
			if n := len(e.deliveries(t, ports.DeliveryQuery{Status: domain.DeliveryDelivered})); n != 1 {
				t.Fatalf("%d DELIVERED records", n)
			}
		})
	}
}

// Two workers (two processes' worth: separate pools) on one Postgres never
// make an attempt of the same delivery at the same time, and every
// delivery is made exactly once.
func TestTwoWorkersOnePostgres(t *testing.T) {
	t.Parallel()
	dsn := testenv.PostgresDSN(t)
	clock := app.SystemClock{}
	e := newEngine(t, dsn, clock, app.WebhooksConfig{})
	rc := newReceiver(t, clock)
	rc.answer = func(int, *http.Request) int { time.Sleep(3 * time.Millisecond); return http.StatusNoContent }
	ep := e.endpoint(t, rc.srv.URL, "charge.created", "payment.created")
	rc.setSecrets(ep.Secret)
	const charges = 60
	for range charges {
		e.charge(t, "")
	}
	other := newService(openDB(t, dsn), clock, app.WebhooksConfig{ClaimBatch: 7})
	first := newService(e.db, clock, app.WebhooksConfig{ClaimBatch: 5})
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for _, s := range []*app.WebhookService{first, other} {
		wg.Go(func() {
			for ctx.Err() == nil {
				_, _ = s.DispatchOnce(ctx)
				if n, err := s.DeliverOnce(ctx); err != nil && ctx.Err() == nil {
					t.Error(err)
				} else if n == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, err := e.db.DeliveryStats(t.Context(), e.scope)
		if err != nil {
			t.Fatal(err)
		}
		if st[domain.DeliveryDelivered] == 2*charges {
			break
		}
		if time.Now().After(deadline) {
			stop()
			wg.Wait()
			t.Fatalf("stats %v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	wg.Wait()
	got := rc.deliveries()
	if len(got) != 2*charges {
		t.Fatalf("receiver saw %d requests for %d deliveries", len(got), 2*charges)
	}
	if rc.maxInFlight != 1 {
		t.Fatalf("a delivery was attempted %d times at once", rc.maxInFlight)
	}
}

// After a rotation, deliveries verify only with the new secret.
func TestRotationSignsWithNewSecretOnly(t *testing.T) {
	t.Parallel()
	clock := app.SystemClock{}
	e := newEngine(t, testenv.SQLiteDSN(t), clock, app.WebhooksConfig{})
	rc := newReceiver(t, clock)
	ep := e.endpoint(t, rc.srv.URL, "charge.created")
	rc.setSecrets(ep.Secret)
	e.charge(t, "")
	e.drain(t, t.Context())

	fresh, err := e.svc.RotateEndpointSecret(t.Context(), e.caller(), ep.ID)
	if err != nil || len(fresh) != domain.WebhookSecretLen || fresh == ep.Secret {
		t.Fatalf("rotate: %q, %v", fresh, err)
	}
	rc.setSecrets(fresh, ep.Secret) // the merchant's deploy window
	e.charge(t, "")
	e.drain(t, t.Context())
	got := rc.deliveries()
	if len(got) != 2 {
		t.Fatalf("%d deliveries", len(got))
	}
	now := clock.Now()
	if err := domain.VerifyWebhook(got[0].signature, got[0].body, now, ep.Secret); err != nil {
		t.Fatalf("delivery before rotation: %v", err)
	}
	if err := domain.VerifyWebhook(got[1].signature, got[1].body, now, ep.Secret); !errors.Is(err, domain.ErrSignatureMismatch) {
		t.Fatalf("delivery after rotation verifies with the old secret: %v", err)
	}
	if err := domain.VerifyWebhook(got[1].signature, got[1].body, now, fresh); err != nil {
		t.Fatalf("delivery after rotation: %v", err)
	}
}

// Deleting an endpoint cancels its pending deliveries; nothing is sent.
func TestDeleteCancelsDeliveries(t *testing.T) {
	t.Parallel()
	clock := app.SystemClock{}
	e := newEngine(t, testenv.SQLiteDSN(t), clock, app.WebhooksConfig{})
	rc := newReceiver(t, clock)
	ep := e.endpoint(t, rc.srv.URL, "charge.created")
	e.charge(t, "")
	if _, err := e.svc.DispatchOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.DeleteEndpoint(t.Context(), e.caller(), ep.ID); err != nil {
		t.Fatal(err)
	}
	e.drain(t, t.Context())
	ds := e.deliveries(t, ports.DeliveryQuery{})
	if len(ds) != 1 || ds[0].Status != domain.DeliveryCancelled {
		t.Fatalf("deliveries %+v", ds)
	}
	if n := len(rc.deliveries()); n != 0 {
		t.Fatalf("receiver got %d requests", n)
	}
}

// 410 Gone deactivates the endpoint and cancels its other deliveries; a
// 429 with Retry-After waits at least that long.
func TestGoneAndRetryAfter(t *testing.T) {
	t.Parallel()
	clock := app.SystemClock{}
	e := newEngine(t, testenv.SQLiteDSN(t), clock, app.WebhooksConfig{ClaimBatch: 1})
	gone := newReceiver(t, clock)
	gone.answer = func(int, *http.Request) int { return http.StatusGone }
	ep := e.endpoint(t, gone.srv.URL, "charge.created")
	gone.setSecrets(ep.Secret)
	e.charge(t, "")
	e.charge(t, "")
	e.drain(t, t.Context())
	eps, _ := e.svc.ListEndpoints(t.Context(), e.caller())
	if len(eps) != 1 || eps[0].Status != domain.EndpointInactive {
		t.Fatalf("endpoint after 410: %+v", eps)
	}
	if n := len(e.deliveries(t, ports.DeliveryQuery{Status: domain.DeliveryCancelled})); n != 2 {
		t.Fatalf("%d CANCELLED, want 2", n)
	}
	if n := len(gone.deliveries()); n != 1 {
		t.Fatalf("receiver called %d times after 410", n)
	}

	busy := newReceiver(t, clock)
	busy.answer = func(_ int, r *http.Request) int { return http.StatusTooManyRequests }
	busy.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "120")
		busy.serve(w, r)
	})
	ep2 := e.endpoint(t, busy.srv.URL, "charge.created")
	busy.setSecrets(ep2.Secret)
	e.charge(t, "")
	_, _ = e.svc.DispatchOnce(t.Context())
	before := time.Now()
	if n, err := e.svc.DeliverOnce(t.Context()); n != 1 || err != nil {
		t.Fatalf("deliver: %d, %v", n, err)
	}
	ds := e.deliveries(t, ports.DeliveryQuery{EndpointID: ep2.ID})
	if len(ds) != 1 || ds[0].Status != domain.DeliveryPending || ds[0].NextRetryAt == nil || ds[0].NextRetryAt.Sub(before) < 119*time.Second {
		t.Fatalf("after 429 with Retry-After 120: %+v", ds)
	}
}

// The per-transaction webhookUrl gets the charge's legacy events only,
// signed sha256= with the account's transaction secret of the charge's mode.
func TestTransactionWebhookURL(t *testing.T) {
	t.Parallel()
	clock := app.SystemClock{}
	e := newEngine(t, testenv.SQLiteDSN(t), clock, app.WebhooksConfig{})
	rc := newReceiver(t, clock, e.acct.TestTransactionWebhookSecret)
	e.charge(t, rc.srv.URL+"/tx")
	e.drain(t, t.Context())
	got := rc.deliveries()
	if len(got) != 1 || got[0].eventType != "payment.created" || !strings.HasPrefix(got[0].signature, "sha256=") {
		t.Fatalf("transaction webhook got %+v", got)
	}
	// After a rotation the new secret signs.
	fresh, err := e.svc.RotateTransactionSecret(t.Context(), e.caller())
	if err != nil {
		t.Fatal(err)
	}
	rc.setSecrets(fresh)
	e.charge(t, rc.srv.URL+"/tx")
	e.drain(t, t.Context())
	if n := len(rc.deliveries()); n != 2 || rc.bad.Load() != 0 {
		t.Fatalf("after rotation: %d deliveries, %d bad", n, rc.bad.Load())
	}
}

// Each mode signs its per-transaction deliveries with its own secret: what
// a test key can learn never verifies a live delivery, and the reverse.
func TestTransactionSecretPerMode(t *testing.T) {
	t.Parallel()
	clock := app.SystemClock{}
	e := newEngine(t, testenv.SQLiteDSN(t), clock, app.WebhooksConfig{})
	live := *e
	live.scope.Mode = domain.ModeLive
	liveSecret, testSecret := e.acct.TransactionWebhookSecret, e.acct.TestTransactionWebhookSecret
	// Both receivers accept either secret; each delivery is checked below.
	testRC := newReceiver(t, clock, liveSecret, testSecret)
	liveRC := newReceiver(t, clock, liveSecret, testSecret)
	e.charge(t, testRC.srv.URL+"/tx")
	live.charge(t, liveRC.srv.URL+"/tx")
	e.drain(t, t.Context())
	live.drain(t, t.Context())
	signedOnlyBy := func(rc *receiver, own, other string) {
		t.Helper()
		got := rc.deliveries()
		if len(got) == 0 {
			t.Fatal("no delivery")
		}
		for _, d := range got {
			if err := domain.VerifyWebhook(d.signature, d.body, clock.Now(), own); err != nil {
				t.Errorf("%s does not verify with its mode's secret: %v", d.eventType, err)
			}
			if err := domain.VerifyWebhook(d.signature, d.body, clock.Now(), other); err == nil {
				t.Errorf("%s verifies with the other mode's secret", d.eventType)
			}
		}
	}
	signedOnlyBy(testRC, testSecret, liveSecret)
	signedOnlyBy(liveRC, liveSecret, testSecret)

	// Rotating with a test key changes the test secret only.
	fresh, err := e.svc.RotateTransactionSecret(t.Context(), e.caller())
	if err != nil || fresh == testSecret || fresh == liveSecret {
		t.Fatalf("rotate: %v", err)
	}
	liveRC2 := newReceiver(t, clock, liveSecret)
	live.charge(t, liveRC2.srv.URL+"/tx")
	live.drain(t, t.Context())
	if len(liveRC2.deliveries()) == 0 || liveRC2.bad.Load() != 0 {
		t.Fatalf("after a test rotation the live secret no longer signs: %d bad", liveRC2.bad.Load())
	}
}

// Resend writes a fresh event of the current status: a new delivery with a
// new evt_ id.
func TestResendCreatesFreshDelivery(t *testing.T) {
	t.Parallel()
	clock := app.SystemClock{}
	e := newEngine(t, testenv.SQLiteDSN(t), clock, app.WebhooksConfig{})
	rc := newReceiver(t, clock)
	ep := e.endpoint(t, rc.srv.URL, "charge.created")
	rc.setSecrets(ep.Secret)
	c := e.charge(t, "")
	e.drain(t, t.Context())
	payments := e.payments()
	got, err := payments.ResendWebhook(t.Context(), e.caller(), c.ID())
	if err != nil || got.Status() != domain.TxPending {
		t.Fatalf("resend: %v", err)
	}
	e.drain(t, t.Context())
	ds := e.deliveries(t, ports.DeliveryQuery{})
	if len(ds) != 2 || ds[0].EventID == ds[1].EventID || ds[0].Status != domain.DeliveryDelivered {
		t.Fatalf("after resend: %+v", ds)
	}
	if _, err := payments.ResendWebhook(t.Context(), e.caller(), "nope"); !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("resend of an unknown charge: %v", err)
	}
}

// A receiver that always fails gets exactly 15 attempts; then FAILED.
func TestFailsAfterMaxAttempts(t *testing.T) {
	t.Parallel()
	clock := app.SystemClock{}
	e := newEngine(t, testenv.SQLiteDSN(t), clock, app.WebhooksConfig{})
	rc := newReceiver(t, clock)
	rc.answer = func(int, *http.Request) int { return http.StatusBadGateway }
	ep := e.endpoint(t, rc.srv.URL, "charge.created")
	rc.setSecrets(ep.Secret)
	e.charge(t, "")
	e.drain(t, t.Context())
	ds := e.deliveries(t, ports.DeliveryQuery{})
	if len(ds) != 1 || ds[0].Status != domain.DeliveryFailed || ds[0].Attempts != domain.MaxDeliveryAttempts ||
		ds[0].NextRetryAt != nil || ds[0].LastError == nil || *ds[0].LastError != "receiver answered HTTP 502" {
		t.Fatalf("delivery %+v", ds)
	}
	if n := len(rc.deliveries()); n != domain.MaxDeliveryAttempts {
		t.Fatalf("receiver saw %d attempts", n)
	}
}
