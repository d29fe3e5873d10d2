package app_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
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

// The refund worker's shape (app's refundChunk and refundLanes): refunds
// one claim takes, and chunks one process drives at once.
const (
	refundClaim = 64
	refundLanes = 4
)

// paidAndRefunded makes n paid charges of R$ 10.00 through svc, each
// refunded whole (PENDING, left to the worker), and returns their ids. It
// makes 16 at a time: concurrent refund creates share a commit.
func paidAndRefunded(ctx context.Context, t *testing.T, svc *app.PaymentService, caller app.Caller, n int) []string {
	t.Helper()
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := w; i < n; i += 16 {
				ids[i], errs[i] = paidAndRefundedOne(ctx, svc, caller, i)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return ids
}

func paidAndRefundedOne(ctx context.Context, svc *app.PaymentService, caller app.Caller, i int) (string, error) {
	resp, err := svc.Charges().Create(ctx, caller, app.CreateChargeInput{Amount: 1000, Currency: "BRL",
		Methods: []domain.Method{domain.MethodPix}}, app.Idempotency{Key: fmt.Sprintf("charge-%d", i), Fingerprint: "f"},
		func(c *domain.Charge) (app.Response, error) {
			return app.Response{StatusCode: 201, Body: []byte(c.ID())}, nil
		})
	if err != nil {
		return "", err
	}
	id := string(resp.Body)
	if _, err := svc.Transition(ctx, caller, id, domain.TxPaid, domain.MethodPix); err != nil {
		return "", err
	}
	_, err = svc.Refund(ctx, caller, id, app.RefundInput{}, app.Idempotency{Key: fmt.Sprintf("refund-%d", i), Fingerprint: "r"},
		func(r domain.Refund) (app.Response, error) {
			return app.Response{StatusCode: 201, Body: []byte(r.ID)}, nil
		})
	return id, err
}

// claimLog is the real store, recording what each claim took.
type claimLog struct {
	*store.DB
	mu     sync.Mutex
	claims [][]string // refund ids, a claim each
}

func (c *claimLog) ClaimOpenRefunds(ctx context.Context, now, leaseUntil time.Time, limit int) ([]ports.OpenRefund, error) {
	refs, err := c.DB.ClaimOpenRefunds(ctx, now, leaseUntil, limit)
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = r.ID
	}
	c.mu.Lock()
	c.claims = append(c.claims, ids)
	c.mu.Unlock()
	return refs, err
}

func (c *claimLog) taken() [][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.claims)
}

// refundWorker is a PaymentService over psp on a Postgres database of its
// own (the store whose claims skip the rows other lanes hold), recording
// its claims.
func refundWorker(t *testing.T, clock ports.Clock, psp ports.Acquirer) (*app.PaymentService, *claimLog) {
	t.Helper()
	db, err := store.Open(context.Background(), testenv.PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	claims := &claimLog{DB: db}
	charges := app.NewChargeService(db, checked(db, idempotency.NewMemory(clock.Now), clock), psp, nil, clock, app.RandomIDs{}, discard(),
		app.ChargesConfig{})
	return app.NewPaymentService(charges, claims, db, psp, clock, app.RandomIDs{}, discard(), app.PaymentsConfig{}), claims
}

// claimSizes is how many refunds each claim took.
func claimSizes(claims [][]string) []int {
	n := make([]int, len(claims))
	for i, c := range claims {
		n[i] = len(c)
	}
	return n
}

// heldPSP is the sandbox whose Refund calls wait until the test lets
// them go on (which refunds may go on is the test's to say, and it may
// say it again): how many wait at once is then the worker's concurrency,
// whatever the machine's speed.
type heldPSP struct {
	*sandbox.Acquirer
	stop <-chan struct{} // the test ended: every held call gives up

	mu      sync.Mutex
	goOn    func(refundID string) bool
	changed chan struct{} // closed when goOn changes
	waiting int
	most    int            // the most calls waiting at once
	starts  map[string]int // refund id → Refund calls
}

var errTestEnded = errors.New("the test ended with this call held")

func (p *heldPSP) Refund(ctx context.Context, req ports.RefundRequest) (string, error) {
	p.mu.Lock()
	p.starts[req.RefundID]++
	p.waiting++
	p.most = max(p.most, p.waiting)
	for !p.goOn(req.RefundID) {
		changed := p.changed
		p.mu.Unlock()
		select {
		case <-changed:
		case <-p.stop:
			p.mu.Lock()
			p.waiting--
			p.mu.Unlock()
			return "", errTestEnded
		}
		p.mu.Lock()
	}
	p.waiting--
	p.mu.Unlock()
	return p.Acquirer.Refund(ctx, req)
}

// let says which held calls go on from now.
func (p *heldPSP) let(goOn func(refundID string) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.goOn = goOn
	close(p.changed)
	p.changed = make(chan struct{})
}

// state is the number of calls waiting now, the most that ever waited at
// once, and how many refunds were started (once or more).
func (p *heldPSP) state() (waiting, most, started int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waiting, p.most, len(p.starts)
}

// eventually waits until cond holds; it fails t only if it never does
// (the limit is far beyond what any machine needs: no speed is asserted)
// or the pass ended first, saying what was expected and what was seen.
func eventually(t *testing.T, done <-chan struct{}, what string, seen func() string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		select {
		case <-done:
			if !cond() {
				t.Fatalf("the pass ended before it %s (%s)", what, seen())
			}
			return
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pass never %s (%s)", what, seen())
		}
	}
}

// One process with a backlog keeps every lane busy and never waits for its
// slowest chunk: against a PSP that holds every refund call, one pass
// has refundLanes full chunks (4 × 64 = 256 refunds) waiting on the PSP at
// once, claimed in 4 claims, and claims no more while they wait. Let every
// call but those of the first chunk go on: the lanes that finish claim the
// rest of the backlog at once and drive it while the first chunk is still
// held. Then the first chunk goes on: every refund started once and
// REFUNDED, the pass reports 320; a pass with nothing left makes one
// claim. Asserted on the calls and claims, not the clock.
func TestRefundLanesStayBusyUnderABacklog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Frozen: no lease ends, so a second start of a refund could only be
	// work done twice.
	clock := testkit.NewClock(t0)
	stop := make(chan struct{})
	psp := &heldPSP{Acquirer: sandbox.New(sandbox.Config{LocationHost: "pay.example.com/pix"}, clock), stop: stop,
		goOn: func(string) bool { return false }, changed: make(chan struct{}), starts: map[string]int{}}
	svc, claims := refundWorker(t, clock, psp)
	t.Cleanup(func() { close(stop) }) // before the database closes
	caller := app.Caller{Account: domain.Account{ID: "acct_lanes", MerchantName: "Loja", MerchantCity: "SAO PAULO"}, Mode: domain.ModeTest}
	const refunds = (refundLanes + 1) * refundClaim // every lane's chunk, and one more
	chargeIDs := paidAndRefunded(ctx, t, svc, caller, refunds)

	var (
		handled int
		passErr error
		done    = make(chan struct{})
	)
	go func() {
		defer close(done)
		handled, passErr = svc.AdvanceRefunds(ctx)
	}()

	seen := func() string {
		waiting, most, started := psp.state()
		return fmt.Sprintf("%d refund calls waiting, at most %d at once, %d refunds started, claims of %v",
			waiting, most, started, claimSizes(claims.taken()))
	}
	eventually(t, done, "had every lane's chunk waiting on the PSP", seen, func() bool {
		waiting, _, _ := psp.state()
		return waiting == refundLanes*refundClaim
	})
	first := claims.taken()
	if got := claimSizes(first); !slices.Equal(got, []int{refundClaim, refundClaim, refundClaim, refundClaim}) {
		t.Fatalf("claims of %v while every lane waits, want %d full ones", got, refundLanes)
	}

	held := first[0]
	psp.let(func(id string) bool { return !slices.Contains(held, id) })
	eventually(t, done, "started the rest of the backlog while the first chunk was held", seen, func() bool {
		waiting, _, started := psp.state()
		return started == refunds && waiting == refundClaim
	})
	psp.let(func(string) bool { return true })
	<-done
	if passErr != nil || handled != refunds {
		t.Fatalf("the pass handled %d (%v), want %d", handled, passErr, refunds)
	}

	_, most, _ := psp.state()
	if most != refundLanes*refundClaim {
		t.Errorf("at most %d refund calls waited at once, want %d (every lane's chunk)", most, refundLanes*refundClaim)
	}
	psp.mu.Lock()
	for id, n := range psp.starts {
		if n != 1 {
			t.Errorf("refund %s started %d times, want once", id, n)
		}
	}
	psp.mu.Unlock()
	for _, id := range chargeIDs {
		rs, err := svc.ListRefunds(ctx, caller, id)
		if err != nil || len(rs) != 1 || rs[0].Status != domain.RefundRefunded {
			t.Fatalf("charge %s: refunds %+v, %v; want one REFUNDED", id, rs, err)
		}
	}
	before := len(claims.taken())
	if n, err := svc.AdvanceRefunds(ctx); n != 0 || err != nil {
		t.Errorf("a pass with nothing open handled %d (%v)", n, err)
	}
	if n := len(claims.taken()) - before; n != 1 {
		t.Errorf("a pass with nothing open made %d claims, want 1", n)
	}
	if problems, err := claims.VerifyDerived(ctx); err != nil || len(problems) > 0 {
		t.Errorf("ledger verify: %v %v", problems, err)
	}
}

// A process with less than a chunk to do makes one claim and opens no
// other lane: a short claim means there is no backlog to share out.
func TestShortRefundClaimOpensNoLane(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := testkit.NewClock(t0)
	svc, claims := refundWorker(t, clock, sandbox.New(sandbox.Config{LocationHost: "pay.example.com/pix"}, clock))
	caller := app.Caller{Account: domain.Account{ID: "acct_short", MerchantName: "Loja", MerchantCity: "SAO PAULO"}, Mode: domain.ModeTest}

	if n, err := svc.AdvanceRefunds(ctx); n != 0 || err != nil {
		t.Fatalf("a pass with nothing open handled %d (%v)", n, err)
	}
	paidAndRefunded(ctx, t, svc, caller, 3)
	if n, err := svc.AdvanceRefunds(ctx); n != 3 || err != nil {
		t.Fatalf("a pass with 3 open handled %d (%v), want 3", n, err)
	}
	if got := claimSizes(claims.taken()); !slices.Equal(got, []int{0, 3}) {
		t.Errorf("claims of %v refunds, want one empty claim, then one of the 3", got)
	}
}
