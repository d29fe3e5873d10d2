package app_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// The claim is short (5 s by default), so a request that
// dies with its process frees the key within seconds.
func TestIdempotencyClaimIsShort(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var ttl time.Duration
	h.cache.BeginFunc = func(_ context.Context, _, _ string, lockTTL time.Duration) (ports.Claim, error) {
		ttl = lockTTL
		return ports.Claim{State: ports.ClaimAcquired}, nil
	}
	if _, err := h.create(t, app.CreateChargeInput{Amount: 100}, "short-claim"); err != nil {
		t.Fatal(err)
	}
	if ttl != 5*time.Second {
		t.Fatalf("claim TTL %v, want 5s", ttl)
	}
}

// A live request keeps renewing its short claim (security.md, item 19), so a retry during a slow acquirer call gets 409 in use (with
// the claim's remaining time) rather than running a second time; once the
// first answers, the retry replays it.
func TestSlowRequestKeepsRenewingItsClaim(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	create := h.acquirer.CreatePixChargeFunc
	h.acquirer.CreatePixChargeFunc = func(ctx context.Context, r ports.CreatePixChargeRequest) (*ports.CreatePixChargeResponse, error) {
		select {
		case entered <- struct{}{}:
		default:
		}
		select {
		case <-release:
			return create(ctx, r)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	const ttl = time.Second
	svc := app.NewChargeService(h.store, exactlyonce.NewDatabaseChecked(h.records, idempotency.NewMemory(nil), app.SystemClock{}, app.RandomIDs{}, discard(),
		exactlyonce.Config{LockTTL: ttl, RenewEvery: ttl / 5}), h.acquirer, nil, app.SystemClock{}, app.RandomIDs{}, discard(),
		app.ChargesConfig{
			Links: domain.Links{CheckoutBase: "https://pay.example.com/c"},
		})
	idem := app.Idempotency{Key: "slow", Fingerprint: "fp-slow"}
	in := app.CreateChargeInput{Amount: 100, Methods: []domain.Method{domain.MethodPix}}
	first := make(chan error, 1)
	go func() {
		_, err := svc.Create(context.Background(), caller, in, idem, render)
		first <- err
	}()
	<-entered
	time.Sleep(3 * ttl)                                             // three claim lifetimes: only renewal keeps the key
	ctx, cancel := context.WithTimeout(context.Background(), 2*ttl) // a broken claim must not hang the test
	defer cancel()
	_, err := svc.Create(ctx, caller, in, idem, render)
	var inUse *app.KeyInUseError
	if !errors.As(err, &inUse) || inUse.Remaining <= 0 || inUse.Remaining > ttl {
		t.Fatalf("retry during the slow call: %v (%+v)", err, inUse)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	resp, err := svc.Create(context.Background(), caller, in, idem, render)
	if err != nil || !resp.Replayed {
		t.Fatalf("retry after the answer: replayed %v, %v", resp.Replayed, err)
	}
	if n := len(h.acquirer.CreatePixChargeCalls()); n != 1 {
		t.Fatalf("acquirer called %d times", n)
	}
}

// Renewal ends with the request: once Create has answered, the claim is
// never extended again, and a renewal stuck on a hanging cache is cut
// short rather than holding the answer back (the claim renews by a timer).
func TestClaimRenewalEndsWithTheRequest(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	release := make(chan struct{})
	create := h.acquirer.CreatePixChargeFunc
	h.acquirer.CreatePixChargeFunc = func(ctx context.Context, r ports.CreatePixChargeRequest) (*ports.CreatePixChargeResponse, error) {
		<-release
		return create(ctx, r)
	}
	var (
		mu      sync.Mutex
		extends int
	)
	hang := make(chan struct{}) // closed: the next Extend hangs until its context ends
	h.cache.ExtendFunc = func(ctx context.Context, _, _ string, _ time.Duration) (bool, error) {
		mu.Lock()
		extends++
		mu.Unlock()
		select {
		case <-hang:
			<-ctx.Done()
			return false, ctx.Err()
		default:
			return true, nil
		}
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return extends
	}
	const every = 10 * time.Millisecond
	svc := app.NewChargeService(h.store, exactlyonce.NewDatabaseChecked(h.records, h.cache, app.SystemClock{}, app.RandomIDs{}, discard(),
		exactlyonce.Config{LockTTL: 50 * every, RenewEvery: every}), h.acquirer, nil, app.SystemClock{}, app.RandomIDs{}, discard(),
		app.ChargesConfig{
			Links: domain.Links{CheckoutBase: "https://pay.example.com/c"},
		})
	done := make(chan error, 1)
	go func() {
		_, err := svc.Create(context.Background(), caller, app.CreateChargeInput{Amount: 100, Methods: []domain.Method{domain.MethodPix}},
			app.Idempotency{Key: "renewed", Fingerprint: "fp-renewed"}, render)
		done <- err
	}()
	for deadline := time.Now().Add(5 * time.Second); count() < 3; {
		if time.Now().After(deadline) {
			t.Fatalf("%d renewals in 5 s, want the claim renewed every %v", count(), every)
		}
		time.Sleep(every)
	}
	close(hang)
	for n := count(); count() == n; { // a renewal is now hanging
		time.Sleep(every)
	}
	close(release)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Create did not answer: the hanging renewal held it")
	}
	after := count()
	time.Sleep(10 * every)
	if n := count(); n != after {
		t.Errorf("%d renewals after Create answered, want none", n-after)
	}
}
