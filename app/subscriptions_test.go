package app_test

import (
	"context"
	"errors"
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

// recurringPSP is the sandbox, counting the cobrs it is asked for by
// txid; afterCobr, when set, runs once the acquirer answered a cobr (a
// test "kills" the process there).
type recurringPSP struct {
	*sandbox.Acquirer
	mu        sync.Mutex
	cobrs     map[string]int
	afterCobr func()
}

func (p *recurringPSP) CreateRecurringCharge(ctx context.Context, req ports.RecurringChargeRequest) (*ports.RecurringCharge, error) {
	r, err := p.Acquirer.CreateRecurringCharge(ctx, req)
	p.mu.Lock()
	p.cobrs[req.TxID]++
	after := p.afterCobr
	p.mu.Unlock()
	if err == nil && after != nil {
		after()
	}
	return r, err
}

func (p *recurringPSP) asked() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int{}
	for k, v := range p.cobrs {
		out[k] = v
	}
	return out
}

// subRig is a subscription service over a real store, as one quitad
// process; process() makes another over the same database.
type subRig struct {
	t      *testing.T
	db     *store.DB
	clock  *testkit.Clock
	psp    *recurringPSP
	caller app.Caller
}

func newSubRig(t *testing.T, dsn string) *subRig {
	t.Helper()
	db, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	clock := testkit.NewClock(time.Date(2027, 3, 1, 15, 0, 0, 0, time.UTC))
	return &subRig{t: t, db: db, clock: clock,
		psp:    &recurringPSP{Acquirer: sandbox.New(sandbox.Config{LocationHost: "pay.example.com/pix"}, clock), cobrs: map[string]int{}},
		caller: app.Caller{Account: domain.Account{ID: "acct_subs", MerchantName: "Loja", MerchantCity: "Sao Paulo"}, Mode: domain.ModeTest}}
}

func (r *subRig) process() *app.SubscriptionService {
	cache := idempotency.NewMemory(r.clock.Now)
	once := exactlyonce.NewDatabaseChecked(r.db, cache, r.clock, app.RandomIDs{}, discard(), exactlyonce.Config{})
	charges := app.NewChargeService(r.db, once, r.psp, nil, r.clock, app.RandomIDs{}, discard(), app.ChargesConfig{})
	return app.NewSubscriptionService(charges, r.db, r.db, r.psp, r.clock, app.RandomIDs{}, discard(), app.SubscriptionsConfig{})
}

// authorized creates a monthly subscription whose first cycle is due in
// five days (its window open) and authorises it; it returns the raw id.
func (r *subRig) authorized(svc *app.SubscriptionService) string {
	r.t.Helper()
	amount := int64(4990)
	start := domain.BrasiliaDate(r.clock.Now()).AddDays(5)
	resp, err := svc.Create(context.Background(), r.caller, app.CreateSubscriptionInput{
		Customer: domain.Customer{Name: "Maria Silva", Document: "52998224725"}, Amount: &amount, Interval: domain.IntervalMonthly,
		StartDate: start, Contract: "CTR-7"}, app.Idempotency{Key: "create-sub-0001", Fingerprint: "fp"},
		func(s *domain.Subscription) (app.Response, error) {
			return app.Response{StatusCode: 201, Body: []byte(s.ID())}, nil
		})
	if err != nil {
		r.t.Fatal(err)
	}
	id := string(resp.Body)
	if _, err := svc.AuthorizeTest(context.Background(), r.psp, r.caller, id); err != nil {
		r.t.Fatal(err)
	}
	return id
}

func (r *subRig) charges(id string) []*domain.Charge {
	r.t.Helper()
	cs, _, err := r.db.ListSubscriptionCharges(context.Background(), ports.SubscriptionChargeQuery{Scope: r.caller.Scope(), SubscriptionID: id, Limit: 100})
	if err != nil {
		r.t.Fatal(err)
	}
	return cs
}

// Two workers (two processes) stepping one subscription at the same time
// create one charge for its cycle. The first worker's claim ends while it
// waits on the acquirer (its lease runs out), so the second claims the
// subscription too and both ask for the cycle's cobr — the same txid,
// derived from the cycle — and both commit: the store's key on
// (subscription, cycle) lets one charge in, and the other worker writes
// nothing and succeeds.
func TestTwoWorkersScheduleOneChargePerCycle(t *testing.T) {
	t.Parallel()
	for _, d := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"postgres", testenv.PostgresDSN}, {"sqlite", testenv.SQLiteDSN}} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			r := newSubRig(t, d.dsn(t))
			a, b := r.process(), r.process()
			id := r.authorized(a)
			both, first := make(chan struct{}), make(chan struct{})
			var arrived sync.Once
			calls := 0
			r.psp.mu.Lock()
			r.psp.afterCobr = func() { // runs with nothing locked
				r.psp.mu.Lock()
				calls++
				n := calls
				r.psp.mu.Unlock()
				switch n {
				case 1:
					arrived.Do(func() { close(first) })
					select {
					case <-both:
					case <-time.After(10 * time.Second):
						t.Error("the second worker never reached the acquirer")
					}
				case 2:
					close(both)
				}
			}
			r.psp.mu.Unlock()
			var wg sync.WaitGroup
			run := func(w *app.SubscriptionService) {
				wg.Go(func() {
					if _, err := w.RunSubscriptions(context.Background()); err != nil {
						t.Errorf("worker: %v", err)
					}
				})
			}
			run(a)
			<-first
			r.clock.Advance(2 * time.Minute) // a's claim has run out
			run(b)
			wg.Wait()

			cs := r.charges(id)
			if len(cs) != 1 {
				t.Fatalf("%d charges for one cycle, want 1", len(cs))
			}
			txid := domain.CycleTxID(r.caller.Account.ID, domain.ModeTest, id, 1)
			if asked := r.psp.asked(); cs[0].Pix().TxID != txid || asked[txid] != 2 || len(asked) != 1 {
				t.Errorf("cobrs asked for %v (both workers, one txid); the charge's txid %s, want %s", asked, cs[0].Pix().TxID, txid)
			}
			sub, err := r.db.GetSubscription(context.Background(), r.caller.Scope(), id)
			if err != nil || sub.NextCycle() != 2 || sub.Cycles().Open != 1 {
				t.Errorf("subscription after the race: next %d, %+v, %v", sub.NextCycle(), sub.Cycles(), err)
			}
		})
	}
}

// A process killed between the acquirer's answer and its commit (the
// context ends there, so the commit fails) leaves no charge; run again, it
// asks for the same cobr and commits exactly one charge for the cycle.
func TestKilledBetweenCobrAndCommitRecreatesTheSameCycle(t *testing.T) {
	t.Parallel()
	for _, d := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"postgres", testenv.PostgresDSN}, {"sqlite", testenv.SQLiteDSN}} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			r := newSubRig(t, d.dsn(t))
			dying := r.process()
			id := r.authorized(dying)
			ctx, kill := context.WithCancel(context.Background())
			r.psp.mu.Lock()
			r.psp.afterCobr = kill
			r.psp.mu.Unlock()
			_, err := dying.RunSubscriptions(ctx)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("the killed run: %v, want context.Canceled", err)
			}
			if cs := r.charges(id); len(cs) != 0 {
				t.Fatalf("the killed run committed %d charges", len(cs))
			}
			r.psp.mu.Lock()
			r.psp.afterCobr = nil
			r.psp.mu.Unlock()

			r.clock.Advance(2 * time.Minute) // the dead process's lease ends
			if _, err := r.process().RunSubscriptions(context.Background()); err != nil {
				t.Fatal(err)
			}
			r.clock.Advance(2 * time.Minute)
			if _, err := r.process().RunSubscriptions(context.Background()); err != nil {
				t.Fatal(err)
			}
			cs := r.charges(id)
			txid := domain.CycleTxID(r.caller.Account.ID, domain.ModeTest, id, 1)
			if len(cs) != 1 || cs[0].Pix().TxID != txid {
				t.Fatalf("%d charges after the rerun, want one for cycle 1", len(cs))
			}
			if asked := r.psp.asked(); asked[txid] != 2 || len(asked) != 1 {
				t.Errorf("cobrs asked for %v: want the same txid twice (the killed run, the rerun)", asked)
			}
		})
	}
}
