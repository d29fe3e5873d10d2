package app_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/sandbox"
	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
)

// sharedPSP is what the PSP saw of two workers' refunds: how often each
// refund was started, and a gate that holds every start until both
// workers have made one — so both hold a claim at the same moment
// however the machine schedules them, and the test needs no timing.
type sharedPSP struct {
	mu      sync.Mutex
	starts  map[string]int // refund id → Refund calls
	arrived [2]bool
	both    chan struct{}
}

// slowPSP is one worker's view of the PSP: the sandbox taking a fixed
// latency per call (a network round trip), counting this worker's starts.
type slowPSP struct {
	*sandbox.Acquirer
	worker int
	shared *sharedPSP
	calls  atomic.Int32
}

func (p *slowPSP) Refund(ctx context.Context, req ports.RefundRequest) (string, error) {
	s := p.shared
	s.mu.Lock()
	s.starts[req.RefundID]++
	if !s.arrived[p.worker] {
		s.arrived[p.worker] = true
		if s.arrived[0] && s.arrived[1] {
			close(s.both)
		}
	}
	s.mu.Unlock()
	select {
	case <-s.both:
	case <-ctx.Done():
		return "", fmt.Errorf("worker %d: the other worker made no refund call while this one held its claim: %w", p.worker, ctx.Err())
	}
	p.calls.Add(1)
	return p.Acquirer.Refund(ctx, req)
}

// Two workers ("processes", each its own PaymentService)
// on one database, against a PSP that takes 10 ms per call, share a batch
// of refunds instead of doing it twice: every refund is started once and
// ends REFUNDED, and each worker started a real share of them (at least a
// full claim of 64) — so together they wait on the PSP for about half of
// what one alone would. The share is asserted by the PSP's calls, not by
// the wall clock: the test holds on a loaded machine.
func TestTwoRefundWorkersShareTheWork(t *testing.T) {
	t.Parallel()
	// Postgres: processes share a database only there (SQLite is the
	// embedded, one-process setup), and its claims skip locked rows.
	dsn := testenv.PostgresDSN(t)
	const (
		// Before the other's first call, one worker may have claimed a
		// chunk in every lane (4 × 64), all held at the gate; one chunk
		// more leaves the other a full claim however the two are scheduled.
		refunds = (refundLanes + 1) * refundClaim
		latency = 10 * time.Millisecond
	)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	// Frozen: no lease ends during the test, so a second start of a refund
	// could only be work done twice.
	clock := testkit.NewClock(t0)
	instant := sandbox.New(sandbox.Config{LocationHost: "pay.example.com/pix"}, clock)
	caller := app.Caller{Account: domain.Account{ID: "acct_share", MerchantName: "Loja", MerchantCity: "SAO PAULO"}, Mode: domain.ModeTest}
	shared := &sharedPSP{starts: map[string]int{}, both: make(chan struct{})}
	worker := func(i int) (*app.PaymentService, *slowPSP) {
		psp := &slowPSP{Acquirer: sandbox.New(sandbox.Config{LocationHost: "pay.example.com/pix", Latency: latency}, clock),
			worker: i, shared: shared}
		charges := app.NewChargeService(db, checked(db, idempotency.NewMemory(clock.Now), clock), psp, nil, clock, app.RandomIDs{}, discard(),
			app.ChargesConfig{})
		return app.NewPaymentService(charges, db, db, psp, clock, app.RandomIDs{}, discard(), app.PaymentsConfig{}), psp
	}

	// The batch: paid charges, each refunded whole, made without latency.
	setupCharges := app.NewChargeService(db, checked(db, idempotency.NewMemory(clock.Now), clock), instant, nil, clock, app.RandomIDs{}, discard(),
		app.ChargesConfig{})
	setup := app.NewPaymentService(setupCharges, db, db, instant, clock, app.RandomIDs{}, discard(), app.PaymentsConfig{})
	chargeIDs := paidAndRefunded(ctx, t, setup, caller, refunds)

	started := func() int {
		shared.mu.Lock()
		defer shared.mu.Unlock()
		return len(shared.starts)
	}
	var (
		wg   sync.WaitGroup
		psps [2]*slowPSP
		errs [2]error
	)
	begin := time.Now()
	for i := range psps {
		svc, psp := worker(i)
		psps[i] = psp
		// As the runner does: ticks back to back while there is work, until
		// every refund has been started and nothing is left to claim.
		wg.Go(func() {
			for ctx.Err() == nil {
				n, err := svc.AdvanceRefunds(ctx)
				if err != nil {
					errs[i] = err
					return
				}
				if n == 0 {
					if started() == refunds {
						return
					}
					time.Sleep(time.Millisecond)
				}
			}
			errs[i] = ctx.Err()
		})
	}
	wg.Wait()
	t.Logf("two workers: %d refunds in %s (not asserted), started %d and %d of them",
		refunds, time.Since(begin).Round(time.Millisecond), psps[0].calls.Load(), psps[1].calls.Load())
	for i, err := range errs {
		if err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
	}

	for id, n := range shared.starts {
		if n != 1 {
			t.Errorf("refund %s started %d times, want once", id, n)
		}
	}
	if len(shared.starts) != refunds {
		t.Errorf("%d refunds started, want %d", len(shared.starts), refunds)
	}
	for i, p := range psps {
		if n := p.calls.Load(); n < refundClaim {
			t.Errorf("worker %d started %d refunds, want a real share (at least one claim of 64)", i, n)
		}
	}
	for _, id := range chargeIDs {
		rs, err := setup.ListRefunds(ctx, caller, id)
		if err != nil || len(rs) != 1 || rs[0].Status != domain.RefundRefunded {
			t.Fatalf("charge %s: refunds %+v, %v; want one REFUNDED", id, rs, err)
		}
	}
	if problems, err := db.VerifyDerived(ctx); err != nil || len(problems) > 0 {
		t.Errorf("ledger verify: %v %v", problems, err)
	}
}
