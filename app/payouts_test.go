package app_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/sandbox"
	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
)

// psp is a PSP that sends each Pix once per send id, as Efí does with its
// idEnvio: a repeated send answers the first one's state.
type psp struct {
	*sandbox.Acquirer
	mu    sync.Mutex
	calls int
	pix   map[string]ports.PixSendRequest // send id → the Pix sent
	// answer is the state a new Pix reaches at once.
	answer domain.PayoutStatus
	// sendErr and statusErr, when set, are what SendPix (which then sends
	// nothing) and PixSendStatus answer instead.
	sendErr, statusErr error
}

func (p *psp) SendPix(_ context.Context, req ports.PixSendRequest) (ports.PixSendResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	if p.sendErr != nil {
		return ports.PixSendResult{}, p.sendErr
	}
	if _, ok := p.pix[req.SendID]; !ok {
		p.pix[req.SendID] = req
	}
	return ports.PixSendResult{Status: p.answer, EndToEndID: "E12345678202611241200" + req.SendID[:11]}, nil
}

func (p *psp) PixSendStatus(_ context.Context, _ ports.Scope, sendID string) (ports.PixSendResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.statusErr != nil {
		return ports.PixSendResult{}, p.statusErr
	}
	if _, ok := p.pix[sendID]; !ok {
		return ports.PixSendResult{}, ports.ErrNotFound
	}
	return ports.PixSendResult{Status: p.answer, EndToEndID: "E12345678202611241200" + sendID[:11]}, nil
}

func (p *psp) sent() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pix)
}

// dyingStore is the real store with faults: the process "dies" around a
// commit (the call fails, before or after the transaction committed), or
// a create is held until released.
type dyingStore struct {
	*store.DB
	mu              sync.Mutex
	dieBeforeCreate bool
	dieAfterCreate  bool
	dieBeforeStep   domain.PayoutStatus
	// updates and batches count UpdatePayout and UpdatePayouts calls.
	updates, batches int
	hold             chan struct{}
	// waiting is signalled when a create waits on hold.
	waiting chan struct{}
}

var errDied = errors.New("process died")

func (d *dyingStore) CreatePayout(ctx context.Context, p *domain.Payout, evs []domain.Event, es []domain.JournalEntry, rec *ports.IdempotencyRecord) error {
	d.mu.Lock()
	before, after, hold := d.dieBeforeCreate, d.dieAfterCreate, d.hold
	d.dieBeforeCreate, d.dieAfterCreate = false, false
	d.mu.Unlock()
	if hold != nil {
		d.waiting <- struct{}{}
		<-hold
	}
	if before {
		return errDied
	}
	err := d.DB.CreatePayout(ctx, p, evs, es, rec)
	if after && err == nil {
		return errDied // committed, but the answer never left
	}
	return err
}

func (d *dyingStore) UpdatePayout(ctx context.Context, scope ports.Scope, id string, fn ports.PayoutChangeFunc) error {
	d.mu.Lock()
	d.updates++
	d.mu.Unlock()
	return d.DB.UpdatePayout(ctx, scope, id, d.dying(fn))
}

// UpdatePayouts dies before the step of the first payout that reaches
// dieBeforeStep: that one is left as it was, the others go on.
func (d *dyingStore) UpdatePayouts(ctx context.Context, refs []ports.PayoutRef, fn ports.PayoutChangeFunc) ([]error, error) {
	d.mu.Lock()
	d.batches++
	d.mu.Unlock()
	return d.DB.UpdatePayouts(ctx, refs, d.dying(fn))
}

func (d *dyingStore) dying(fn ports.PayoutChangeFunc) ports.PayoutChangeFunc {
	return func(ctx context.Context, p *domain.Payout) (ports.PayoutChange, error) {
		ch, err := fn(ctx, p)
		d.mu.Lock()
		defer d.mu.Unlock()
		if err == nil && d.dieBeforeStep != "" && p.Status() == d.dieBeforeStep {
			d.dieBeforeStep = ""
			return ports.PayoutChange{}, errDied // rolled back
		}
		return ch, err
	}
}

type payoutRig struct {
	t      *testing.T
	db     *store.DB
	store  *dyingStore
	psp    *psp
	clock  *testkit.Clock
	caller app.Caller
	// log, when set, is the services' logger (else discarded).
	log *slog.Logger
}

func newPayoutRig(t *testing.T) *payoutRig {
	t.Helper()
	db, err := store.Open(context.Background(), testenv.SQLiteDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	clock := testkit.NewClock(time.Time{})
	r := &payoutRig{t: t, db: db, store: &dyingStore{DB: db}, clock: clock,
		psp: &psp{Acquirer: sandbox.New(sandbox.Config{LocationHost: "pay.example.com/pix"}, clock), pix: map[string]ports.PixSendRequest{},
			answer: domain.PayoutPaid},
		caller: app.Caller{Account: domain.Account{ID: "acct_crash", MerchantName: "Loja", MerchantCity: "SAO PAULO"}, Mode: domain.ModeTest}}
	// Fund the wallet: a paid Pix charge of 10000 (no fees here).
	charges, _ := r.process()
	pay := app.NewPaymentService(charges, db, db, r.psp, clock, app.RandomIDs{}, discard(), app.PaymentsConfig{})
	resp, err := charges.Create(context.Background(), r.caller, app.CreateChargeInput{Amount: 10000, Currency: "BRL",
		Methods: []domain.Method{domain.MethodPix}}, app.Idempotency{Key: "fund-the-wallet", Fingerprint: "f"},
		func(c *domain.Charge) (app.Response, error) {
			return app.Response{StatusCode: 201, Body: []byte(c.ID())}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pay.Transition(context.Background(), r.caller, string(resp.Body), domain.TxPaid, domain.MethodPix); err != nil {
		t.Fatal(err)
	}
	return r
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// process starts a fresh "process" over the same database: its own
// idempotency cache (a restart loses the claims) and services.
func (r *payoutRig) process() (*app.ChargeService, *app.PayoutService) {
	cache := idempotency.NewMemory(r.clock.Now)
	log := r.log
	if log == nil {
		log = discard()
	}
	charges := app.NewChargeService(r.db, exactlyonce.NewDatabaseChecked(r.db, cache, r.clock, app.RandomIDs{}, log, exactlyonce.Config{}), r.psp, nil, r.clock, app.RandomIDs{}, log,
		app.ChargesConfig{})
	return charges, app.NewPayoutService(charges, r.store, r.psp, r.clock, app.RandomIDs{}, log,
		app.PayoutsConfig{PixOutFee: domain.Fee{Fixed: 50}, Recheck: 10 * time.Second})
}

func (r *payoutRig) create(svc *app.PayoutService, key string) (app.Response, error) {
	return svc.Create(context.Background(), r.caller, app.CreatePayoutInput{Amount: 3000, PixKey: "52998224725"},
		app.Idempotency{Key: key, Fingerprint: "fp-" + key},
		func(p *domain.Payout) (app.Response, error) {
			return app.Response{StatusCode: 201, Body: []byte(p.ID())}, nil
		})
}

func (r *payoutRig) available() int64 {
	r.t.Helper()
	ws, err := r.db.Wallets(context.Background(), r.caller.Scope())
	if err != nil || len(ws) != 1 {
		r.t.Fatalf("wallets: %v %v", ws, err)
	}
	return ws[0].Available
}

func (r *payoutRig) verify() {
	r.t.Helper()
	tot, err := r.db.LedgerTotals(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	problems := domain.VerifyLedger(tot.Unbalanced, tot.Posted, tot.Stored, tot.Held)
	more, err := r.db.VerifyDerived(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	if problems = append(problems, more...); len(problems) > 0 {
		r.t.Errorf("ledger verify: %v", problems)
	}
}

// TestPayoutCrashSendsOnce: the PSP accepts and pays the Pix, the process
// dies before the outcome commits, the client retries its create, a new
// process's worker runs again: exactly one Pix was sent, the payout is
// paid once, and the ledger is clean.
func TestPayoutCrashSendsOnce(t *testing.T) {
	t.Parallel()
	r := newPayoutRig(t)
	_, first := r.process()
	resp, err := r.create(first, "payout-crash-1")
	if err != nil {
		t.Fatal(err)
	}
	id := string(resp.Body)
	r.store.dieBeforeStep = domain.PayoutPaid
	if _, err := first.SendPayouts(context.Background()); !errors.Is(err, errDied) {
		t.Fatalf("first pass: %v, want the simulated death", err)
	}
	if r.psp.sent() != 1 {
		t.Fatalf("%d Pix sent by the first pass", r.psp.sent())
	}
	// A new process; the client retries the same create: the same payout.
	_, second := r.process()
	again, err := r.create(second, "payout-crash-1")
	if err != nil || !again.Replayed || string(again.Body) != id {
		t.Fatalf("client retry: %+v %v", again, err)
	}
	// Its worker finds the payout processing once the lease ends, asks the
	// PSP, and records the outcome without sending again.
	r.clock.Advance(11 * time.Second)
	if _, err := second.SendPayouts(context.Background()); err != nil {
		t.Fatal(err)
	}
	p, err := second.Get(context.Background(), r.caller, id)
	if err != nil || p.Status() != domain.PayoutPaid || p.Snapshot().EndToEndID == "" {
		t.Fatalf("after recovery: %+v %v", p, err)
	}
	if r.psp.sent() != 1 || r.psp.calls != 1 {
		t.Errorf("%d Pix sent in %d calls, want one Pix in one call", r.psp.sent(), r.psp.calls)
	}
	if a := r.available(); a != 10000-3050 {
		t.Errorf("available %d, want %d", a, 10000-3050)
	}
	r.verify()
}

// TestPayoutCrashAroundCreate: a create that dies before its commit leaves
// nothing; one that dies after it answers the retry with the same payout.
// Either way one payout, one hold and one Pix.
func TestPayoutCrashAroundCreate(t *testing.T) {
	t.Parallel()
	r := newPayoutRig(t)
	_, svc := r.process()
	r.store.dieBeforeCreate = true
	if _, err := r.create(svc, "payout-crash-2"); !errors.Is(err, errDied) {
		t.Fatalf("create: %v", err)
	}
	if a := r.available(); a != 10000 {
		t.Fatalf("a create that never committed moved %d", 10000-a)
	}
	first, err := r.create(svc, "payout-crash-2")
	if err != nil || first.Replayed {
		t.Fatalf("retry after a death before commit: %+v %v", first, err)
	}
	r.store.dieAfterCreate = true
	if _, err := r.create(svc, "payout-crash-3"); !errors.Is(err, errDied) {
		t.Fatalf("create: %v", err)
	}
	_, restarted := r.process()
	second, err := r.create(restarted, "payout-crash-3")
	if err != nil || !second.Replayed {
		t.Fatalf("retry after a death after commit: %+v %v", second, err)
	}
	// The death after the step to processing committed: the Pix goes out
	// on the next pass, once.
	r.psp.answer = domain.PayoutProcessing
	for range 3 {
		if _, err := restarted.SendPayouts(context.Background()); err != nil {
			t.Fatal(err)
		}
		r.clock.Advance(11 * time.Second)
	}
	if r.psp.sent() != 2 {
		t.Errorf("%d Pix sent for two payouts", r.psp.sent())
	}
	if a := r.available(); a != 10000-2*3050 {
		t.Errorf("available %d, want %d", a, 10000-2*3050)
	}
	r.verify()
}

// TestPayoutKeyInUse: a second request with a key whose first request is
// still running is 409 in use (a different body with it: reused).
func TestPayoutKeyInUse(t *testing.T) {
	t.Parallel()
	r := newPayoutRig(t)
	_, svc := r.process()
	hold := make(chan struct{})
	r.store.hold, r.store.waiting = hold, make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() { _, err := r.create(svc, "payout-in-use"); done <- err }()
	<-r.store.waiting
	if _, err := r.create(svc, "payout-in-use"); !errors.Is(err, app.ErrIdempotencyKeyInUse) {
		t.Fatalf("second request: %v, want in use", err)
	}
	_, err := svc.Create(context.Background(), r.caller, app.CreatePayoutInput{Amount: 1, PixKey: "52998224725"},
		app.Idempotency{Key: "payout-in-use", Fingerprint: "other"},
		func(p *domain.Payout) (app.Response, error) { return app.Response{StatusCode: 201}, nil })
	if !errors.Is(err, app.ErrIdempotencyKeyReused) {
		t.Errorf("another body while in use: %v", err)
	}
	r.store.mu.Lock()
	r.store.hold = nil
	r.store.mu.Unlock()
	close(hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestPayoutDefaultFee: without an account override the configured
// QUITA_FEE_PIX_OUT applies.
func TestPayoutDefaultFee(t *testing.T) {
	t.Parallel()
	r := newPayoutRig(t)
	_, svc := r.process()
	resp, err := r.create(svc, "payout-fee")
	if err != nil {
		t.Fatal(err)
	}
	p, err := svc.Get(context.Background(), r.caller, string(resp.Body))
	if err != nil || p.Fee() != 50 {
		t.Fatalf("fee: %v %v", p, err)
	}
}

// checked is the DatabaseChecked runner over records and cache.
func checked(records ports.IdempotencyStore, cache ports.IdempotencyCache, clock ports.Clock) *exactlyonce.Runner {
	return exactlyonce.NewDatabaseChecked(records, cache, clock, app.RandomIDs{}, discard(), exactlyonce.Config{})
}
