package app_test

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

// Issue 12 item 3: the claim is short (5 s by default), so a request that
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

// Issue 12 item 3 and issue 11 item 19: a live request keeps renewing its
// short claim, so a retry during a slow acquirer call gets 409 in use (with
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
	svc := app.NewChargeService(h.store, h.records, idempotency.NewMemory(nil), h.acquirer, nil, app.SystemClock{},
		&mocks.IDGeneratorMock{NewIDFunc: func() (string, error) { return domain.NewRawID(rand.Reader) }},
		slog.New(slog.NewTextHandler(io.Discard, nil)), app.ChargesConfig{
			Links:              domain.Links{CheckoutBase: "https://pay.example.com/c"},
			IdempotencyLockTTL: ttl, IdempotencyRenewEvery: ttl / 5,
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
