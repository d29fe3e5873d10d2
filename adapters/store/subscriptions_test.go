package store_test

import (
	"context"
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// TestSubscriptionStore is the subscription contract, on both databases.
func TestSubscriptionStore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  func(t *testing.T, db *store.DB)
	}{
		{"RoundTripsEveryField", testSubscriptionRoundTrip},
		{"OneChargePerCycle", testSubscriptionOneChargePerCycle},
		{"ConcurrentCyclesHaveOneCharge", testSubscriptionConcurrentCycles},
		{"FailedChangeWritesNothing", testSubscriptionFailedChange},
		{"ClaimsLeaseWhatIsDue", testSubscriptionClaims},
		{"ListsPaginateInScope", testSubscriptionLists},
		{"CreateWithFirstPaymentAndKey", testSubscriptionCreateFirstPayment},
	}
	for _, d := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"postgres", testenv.PostgresDSN}, {"sqlite", testenv.SQLiteDSN}} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					t.Parallel()
					tt.run(t, openStore(t, d.dsn(t)))
				})
			}
		})
	}
}

// subStart is the first due date of the test subscriptions: 40 days after
// baseTime in Brasília.
var subStart = domain.BrasiliaDate(baseTime).AddDays(40)

func newSubscription(t testing.TB, scope ports.Scope, edit func(*domain.NewSubscriptionParams)) *domain.Subscription {
	t.Helper()
	amount := int64(4990)
	p := domain.NewSubscriptionParams{ID: newRawID(t), AccountID: scope.AccountID, Mode: scope.Mode,
		Customer: domain.Customer{Name: "Maria Silva", Document: "529.982.247-25"}, Amount: &amount,
		Interval: domain.IntervalMonthly, StartDate: subStart, Contract: "CTR-1", Description: "Plano", Now: baseTime}
	if edit != nil {
		edit(&p)
	}
	s, err := domain.NewSubscription(p)
	if err != nil {
		t.Fatalf("NewSubscription: %v", err)
	}
	if err := s.AttachMandate(domain.Mandate{RecID: "RN9999999920260301abcdefghijk", SolicRecID: "SC9999999920260301abcdefghijk",
		SolicRecStatus: domain.SolicRecSent, BRCode: "000201", Location: "pay.example.com/rec/x"}, baseTime); err != nil {
		t.Fatal(err)
	}
	return s
}

func mustCreateSubscription(t testing.TB, db *store.DB, s *domain.Subscription) {
	t.Helper()
	evs, err := domain.NewSubscriptionEvents(s, []domain.EventType{domain.EventSubscriptionCreated}, links,
		func() (string, error) { return newRawID(t), nil }, baseTime)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateSubscription(t.Context(), s, evs, nil, nil, nil); err != nil {
		t.Fatalf("CreateSubscription: %v", err)
	}
}

// cycleCharge is cycle spec's charge and cycle, as the app builds them.
func cycleCharge(t testing.TB, s *domain.Subscription, spec domain.CycleSpec) (*domain.Charge, *domain.Cycle) {
	t.Helper()
	txid := domain.CycleTxID(s.AccountID(), s.Mode(), s.ID(), spec.Cycle)
	c := newCharge(t, ports.Scope{AccountID: s.AccountID(), Mode: s.Mode()}, baseTime, func(p *domain.NewChargeParams) {
		p.Amount, p.Metadata, p.Description = spec.Amount, nil, ""
		p.Customer = s.Customer()
		p.Subscription = &domain.ChargeSubscription{ID: s.ID(), Cycle: spec.Cycle, DueDate: spec.DueDate}
		p.ExpiresAt = domain.EndOfBrasiliaDay(spec.LastDebit)
	})
	if err := c.AttachPix(domain.PixDetails{TxID: txid}, "sandbox", txid, baseTime); err != nil {
		t.Fatal(err)
	}
	cy, err := domain.NewCycle(domain.NewCycleParams{SubscriptionID: s.ID(), Cycle: spec.Cycle, AccountID: s.AccountID(), Mode: s.Mode(),
		ChargeID: c.ID(), TxID: txid, DueDate: spec.DueDate, Amount: spec.Amount, Policy: s.RetryPolicy(), Now: baseTime})
	if err != nil {
		t.Fatal(err)
	}
	return c, cy
}

// scheduleNext runs the change that schedules s's next cycle with a
// charge of its own, and returns the charge's id.
func scheduleNext(ctx context.Context, t testing.TB, db *store.DB, scope ports.Scope, id string) (string, error) {
	var chargeID string
	err := db.UpdateSubscription(ctx, scope, id, func(_ context.Context, s *domain.Subscription, _ ports.SubscriptionTx) (ports.SubscriptionChange, error) {
		spec, err := s.NextCycleSpec(subStart, true)
		if err != nil {
			return ports.SubscriptionChange{}, err
		}
		c, cy := cycleCharge(t, s, spec)
		chargeID = c.ID()
		if err := s.CycleScheduled(cy, baseTime); err != nil {
			return ports.SubscriptionChange{}, err
		}
		return ports.SubscriptionChange{NewCycle: cy, Charge: c}, nil
	})
	return chargeID, err
}

func authorized(t testing.TB, db *store.DB, scope ports.Scope, id string) {
	t.Helper()
	err := db.UpdateSubscription(t.Context(), scope, id, func(_ context.Context, s *domain.Subscription, _ ports.SubscriptionTx) (ports.SubscriptionChange, error) {
		return ports.SubscriptionChange{}, s.Authorize(baseTime)
	})
	if err != nil {
		t.Fatalf("authorize: %v", err)
	}
}

// Every field of a subscription and of a cycle survives the round trip:
// the fixtures set them all (assertNoZeroField), so a column the store
// forgets shows up as a difference.
func testSubscriptionRoundTrip(t *testing.T, db *store.DB) {
	ctx := t.Context()
	max := int64(9000)
	s := domain.UnmarshalSubscriptionFromStorage(domain.SubscriptionSnapshot{
		ID: newRawID(t), AccountID: liveA.AccountID, Mode: liveA.Mode, Status: domain.SubscriptionCancelled,
		CancelledBy: domain.CancelledByPayer, Payer: domain.Payer{Name: "Ana O'Neil", Document: "529.982.247-25"},
		Amount: 4990, Variable: true, MaxAmount: max, Interval: domain.IntervalQuarterly, StartDate: subStart,
		EndDate: subStart.AddDays(365), Contract: "C'1 \"x\"", Description: "Açaí – plano", RetryPolicy: domain.RetryThreeInSevenDays,
		Journey: domain.JourneyQRCodeWithFirstPayment, FirstPayment: 990, FirstChargeID: newRawID(t),
		PayerAccount: &domain.PayerAccount{ISPB: "0000000A", Branch: "0001", Number: "00012345678"},
		Mandate: domain.Mandate{RecID: "RR9999999920260301abcdefghijk", RecStatus: domain.RecCancelled,
			SolicRecID: "SC9999999920260301abcdefghijk", SolicRecStatus: domain.SolicRecCancelled, BRCode: "000201br", Location: "loc"},
		AuthorizationExpiresAt: baseTime.Add(time.Hour), NextCycle: 4, NextAmount: 1234,
		Cycles: domain.CycleCounts{Open: 1, Paid: 2, Failed: 3, Skipped: 4},
		Latest: &domain.CycleSummary{Cycle: 3, DueDate: subStart.AddDays(180), Amount: 777, ChargeID: newRawID(t),
			Status: domain.CycleRetrying, Attempts: 2, NextDebit: subStart.AddDays(182), FailureCode: "AM04"},
		NextRunAt: baseTime.Add(2 * time.Hour), CreatedAt: baseTime, UpdatedAt: baseTime.Add(time.Minute),
		AuthorizedAt: baseTime.Add(3 * time.Minute), CancelledAt: baseTime.Add(4 * time.Minute), EndedAt: baseTime.Add(5 * time.Minute),
	})
	assertNoZeroField(t, reflect.ValueOf(s.Snapshot()), "SubscriptionSnapshot")
	if err := db.CreateSubscription(ctx, s, nil, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetSubscription(ctx, liveA, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	want := s.Snapshot()
	for _, p := range []*time.Time{&want.AuthorizationExpiresAt, &want.NextRunAt, &want.CreatedAt, &want.UpdatedAt,
		&want.AuthorizedAt, &want.CancelledAt, &want.EndedAt} {
		*p = micro(*p)
	}
	if !reflect.DeepEqual(got.Snapshot(), want) {
		t.Errorf("subscription round trip:\n got %+v\nwant %+v", got.Snapshot(), want)
	}
	if _, err := db.GetSubscription(ctx, testA, s.ID()); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("another mode reads it: %v", err)
	}
	if byID, err := db.GetSubscriptionByID(ctx, s.ID()); err != nil || byID.ID() != s.ID() {
		t.Errorf("GetSubscriptionByID: %v", err)
	}

	open := newSubscription(t, liveA, func(p *domain.NewSubscriptionParams) { p.RetryPolicy = domain.RetryThreeInSevenDays })
	mustCreateSubscription(t, db, open)
	authorized(t, db, liveA, open.ID())
	chargeID, err := scheduleNext(ctx, t, db, liveA, open.ID())
	if err != nil {
		t.Fatal(err)
	}
	e2e := "E99999999202603011200abcdefghijk"
	var want2 domain.CycleSnapshot
	err = db.UpdateSubscription(ctx, liveA, open.ID(), func(ctx context.Context, s *domain.Subscription, tx ports.SubscriptionTx) (ports.SubscriptionChange, error) {
		c, err := tx.Cycle(ctx, 1)
		if err != nil {
			return ports.SubscriptionChange{}, err
		}
		if _, err := c.DebitFailed("AM04", baseTime); err != nil {
			return ports.SubscriptionChange{}, err
		}
		if err := c.Paid(e2e, baseTime.Add(time.Second)); err != nil {
			return ports.SubscriptionChange{}, err
		}
		c.SetCheckAt(baseTime.Add(time.Hour))
		want2 = c.Snapshot()
		s.CycleClosed(c, baseTime)
		return ports.SubscriptionChange{Cycles: []*domain.Cycle{c}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	assertNoZeroField(t, reflect.ValueOf(want2), "CycleSnapshot")
	cycles, err := db.ListCycles(ctx, liveA, open.ID())
	if err != nil || len(cycles) != 1 {
		t.Fatalf("ListCycles: %d %v", len(cycles), err)
	}
	for _, p := range []*time.Time{&want2.CheckAt, &want2.CreatedAt, &want2.UpdatedAt} {
		*p = micro(*p)
	}
	if got := cycles[0].Snapshot(); !reflect.DeepEqual(got, want2) || got.ChargeID != chargeID {
		t.Errorf("cycle round trip:\n got %+v\nwant %+v", got, want2)
	}
	ch := mustGet(t, db, liveA, chargeID)
	if l, ok := ch.Subscription(); !ok || l.ID != open.ID() || l.Cycle != 1 || l.DueDate != subStart {
		t.Errorf("the charge's link: %+v %v", l, ok)
	}
}

// A cycle has one charge: scheduling it again — a second worker whose
// change was computed before the first committed — fails on the cycle's
// unique key and writes nothing, not even the second charge.
func testSubscriptionOneChargePerCycle(t *testing.T, db *store.DB) {
	ctx := t.Context()
	s := newSubscription(t, liveA, nil)
	mustCreateSubscription(t, db, s)
	authorized(t, db, liveA, s.ID())
	stale, err := db.GetSubscription(ctx, liveA, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	first, err := scheduleNext(ctx, t, db, liveA, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	// The stale worker's change: computed from the subscription before the
	// first commit, so the domain's own check cannot see it.
	spec, err := stale.NextCycleSpec(subStart, true)
	if err != nil {
		t.Fatal(err)
	}
	dupCharge, dupCycle := cycleCharge(t, stale, spec)
	err = db.UpdateSubscription(ctx, liveA, s.ID(), func(context.Context, *domain.Subscription, ports.SubscriptionTx) (ports.SubscriptionChange, error) {
		return ports.SubscriptionChange{NewCycle: dupCycle, Charge: dupCharge}, nil
	})
	if !errors.Is(err, ports.ErrDuplicate) {
		t.Fatalf("second charge for cycle 1: %v, want ErrDuplicate", err)
	}
	if _, err := db.GetCharge(ctx, liveA, dupCharge.ID()); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("the second charge was written: %v", err)
	}
	charges, _, err := db.ListSubscriptionCharges(ctx, ports.SubscriptionChargeQuery{Scope: liveA, SubscriptionID: s.ID(), Limit: 10})
	if err != nil || len(charges) != 1 || charges[0].ID() != first {
		t.Errorf("charges of the subscription: %d %v", len(charges), err)
	}
}

// Workers racing for one cycle, each with its own charge: exactly one
// commits.
func testSubscriptionConcurrentCycles(t *testing.T, db *store.DB) {
	ctx := t.Context()
	s := newSubscription(t, liveA, nil)
	mustCreateSubscription(t, db, s)
	authorized(t, db, liveA, s.ID())
	base, err := db.GetSubscription(ctx, liveA, s.ID())
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := base.NextCycleSpec(subStart, true)
	const workers = 8
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		wins int
	)
	for range workers {
		charge, cycle := cycleCharge(t, base, spec)
		wg.Go(func() {
			err := db.UpdateSubscription(ctx, liveA, s.ID(), func(_ context.Context, s *domain.Subscription, _ ports.SubscriptionTx) (ports.SubscriptionChange, error) {
				// Written whatever the subscription says now: the store's
				// key is what decides.
				_ = s.CycleScheduled(cycle, baseTime)
				return ports.SubscriptionChange{NewCycle: cycle, Charge: charge}, nil
			})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, ports.ErrDuplicate):
				t.Errorf("racing worker: %v", err)
			}
		})
	}
	wg.Wait()
	charges, _, err := db.ListSubscriptionCharges(ctx, ports.SubscriptionChargeQuery{Scope: liveA, SubscriptionID: s.ID(), Limit: 100})
	if wins != 1 || err != nil || len(charges) != 1 {
		t.Fatalf("%d workers committed, %d charges (%v); want exactly one", wins, len(charges), err)
	}
}

// An error from the change, or a failed insert, leaves the subscription
// as it was.
func testSubscriptionFailedChange(t *testing.T, db *store.DB) {
	ctx := t.Context()
	s := newSubscription(t, liveA, nil)
	mustCreateSubscription(t, db, s)
	boom := errors.New("boom")
	err := db.UpdateSubscription(ctx, liveA, s.ID(), func(_ context.Context, s *domain.Subscription, _ ports.SubscriptionTx) (ports.SubscriptionChange, error) {
		_ = s.Authorize(baseTime)
		return ports.SubscriptionChange{}, boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("fn's error: %v", err)
	}
	if got, _ := db.GetSubscription(ctx, liveA, s.ID()); got.Status() != domain.SubscriptionPendingAuthorization {
		t.Errorf("status %s after a failed change", got.Status())
	}
	err = db.UpdateSubscription(ctx, liveB, s.ID(), func(context.Context, *domain.Subscription, ports.SubscriptionTx) (ports.SubscriptionChange, error) {
		t.Error("fn called for another account's subscription")
		return ports.SubscriptionChange{}, nil
	})
	if !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("another account: %v", err)
	}
}

// Due subscriptions and cycles are leased once: a second claim before the
// lease ends finds nothing.
func testSubscriptionClaims(t *testing.T, db *store.DB) {
	ctx := t.Context()
	s := newSubscription(t, liveA, nil)
	mustCreateSubscription(t, db, s)
	later := newSubscription(t, testA, nil)
	mustCreateSubscription(t, db, later)
	due := s.NextRunAt()
	got, err := db.ClaimDueSubscriptions(ctx, due.Add(-time.Second), due.Add(time.Hour), 10)
	if err != nil || len(got) != 0 {
		t.Fatalf("claimed before due: %v %v", got, err)
	}
	got, err = db.ClaimDueSubscriptions(ctx, due, due.Add(time.Hour), 10)
	if err != nil || len(got) != 2 {
		t.Fatalf("claim: %v %v", got, err)
	}
	if again, _ := db.ClaimDueSubscriptions(ctx, due.Add(time.Minute), due.Add(2*time.Hour), 10); len(again) != 0 {
		t.Errorf("claimed again inside the lease: %v", again)
	}
	if again, _ := db.ClaimDueSubscriptions(ctx, due.Add(time.Hour), due.Add(2*time.Hour), 10); len(again) != 2 {
		t.Errorf("not claimable after the lease: %v", again)
	}

	authorized(t, db, liveA, s.ID())
	if _, err := scheduleNext(ctx, t, db, liveA, s.ID()); err != nil {
		t.Fatal(err)
	}
	check := baseTime.Add(30 * time.Minute)
	err = db.UpdateSubscription(ctx, liveA, s.ID(), func(ctx context.Context, _ *domain.Subscription, tx ports.SubscriptionTx) (ports.SubscriptionChange, error) {
		c, err := tx.Cycle(ctx, 1)
		if err != nil {
			return ports.SubscriptionChange{}, err
		}
		c.SetCheckAt(check)
		return ports.SubscriptionChange{Cycles: []*domain.Cycle{c}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := db.ClaimDueCycles(ctx, check, check.Add(time.Minute), 10)
	if err != nil || len(cs) != 1 || cs[0].SubscriptionID != s.ID() || cs[0].Cycle != 1 || cs[0].Scope != liveA {
		t.Fatalf("cycle claim: %+v %v", cs, err)
	}
	if again, _ := db.ClaimDueCycles(ctx, check.Add(time.Second), check.Add(time.Hour), 10); len(again) != 0 {
		t.Errorf("cycle claimed again inside the lease: %v", again)
	}
}

// Lists page with a cursor, stay in their scope, and a subscription's
// charges come latest cycle first.
func testSubscriptionLists(t *testing.T, db *store.DB) {
	ctx := t.Context()
	var ids []string
	for i := range 3 {
		s := newSubscription(t, liveA, func(p *domain.NewSubscriptionParams) { p.Now = baseTime.Add(time.Duration(i) * time.Second) })
		mustCreateSubscription(t, db, s)
		ids = append(ids, s.ID())
	}
	mustCreateSubscription(t, db, newSubscription(t, liveB, nil))
	page, more, err := db.ListSubscriptions(ctx, ports.SubscriptionQuery{Scope: liveA, Limit: 2})
	if err != nil || !more || len(page) != 2 || page[0].ID() != ids[2] || page[1].ID() != ids[1] {
		t.Fatalf("first page: %v more %v %v", page, more, err)
	}
	page, more, err = db.ListSubscriptions(ctx, ports.SubscriptionQuery{Scope: liveA, Limit: 2, StartingAfter: ids[1]})
	if err != nil || more || len(page) != 1 || page[0].ID() != ids[0] {
		t.Fatalf("second page: %v more %v %v", page, more, err)
	}
	if _, _, err := db.ListSubscriptions(ctx, ports.SubscriptionQuery{Scope: liveB, Limit: 2, StartingAfter: ids[1]}); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("a cursor of another account: %v", err)
	}
	if st, _, _ := db.ListSubscriptions(ctx, ports.SubscriptionQuery{Scope: liveA, Limit: 10,
		Statuses: []domain.SubscriptionStatus{domain.SubscriptionActive}}); len(st) != 0 {
		t.Errorf("active filter: %d", len(st))
	}

	authorized(t, db, liveA, ids[0])
	var charges []string
	for range 3 {
		id, err := scheduleNext(ctx, t, db, liveA, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		charges = append(charges, id)
	}
	got, more, err := db.ListSubscriptionCharges(ctx, ports.SubscriptionChargeQuery{Scope: liveA, SubscriptionID: ids[0], Limit: 2})
	if err != nil || !more || len(got) != 2 || got[0].ID() != charges[2] || got[1].ID() != charges[1] {
		t.Fatalf("charges page 1: %d more %v %v", len(got), more, err)
	}
	got, more, err = db.ListSubscriptionCharges(ctx, ports.SubscriptionChargeQuery{Scope: liveA, SubscriptionID: ids[0], Limit: 2,
		StartingAfter: charges[1]})
	if err != nil || more || len(got) != 1 || got[0].ID() != charges[0] {
		t.Fatalf("charges page 2: %d more %v %v", len(got), more, err)
	}
	if got, _, _ := db.ListSubscriptionCharges(ctx, ports.SubscriptionChargeQuery{Scope: liveB, SubscriptionID: ids[0], Limit: 10}); len(got) != 0 {
		t.Errorf("another account sees %d charges", len(got))
	}
}

// A qr_code_with_first_payment subscription is created with its first
// payment's charge and its idempotency record in one transaction; a second
// create under the key writes nothing.
func testSubscriptionCreateFirstPayment(t *testing.T, db *store.DB) {
	ctx := t.Context()
	first := int64(990)
	s := newSubscription(t, liveA, func(p *domain.NewSubscriptionParams) {
		p.Journey, p.FirstPayment = domain.JourneyQRCodeWithFirstPayment, &first
	})
	charge := newCharge(t, liveA, baseTime, func(p *domain.NewChargeParams) {
		p.Amount, p.Subscription, p.ExpiresAt = first, &domain.ChargeSubscription{ID: s.ID()}, s.FirstChargeExpiresAt()
	})
	s.SetFirstCharge(charge.ID())
	rec := idemRecord(liveA, "sub-key-0001", domain.PrefixSubscription+s.ID())
	if err := db.CreateSubscription(ctx, s, nil, charge, chargeEvents(t, charge, "", domain.CreationEvents(), baseTime), rec); err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, db, liveA, charge.ID())
	if l, ok := got.Subscription(); !ok || !l.FirstPayment() || l.ID != s.ID() || l.DueDate != (bizdays.Date{}) {
		t.Errorf("first payment link %+v %v", l, ok)
	}
	other := newSubscription(t, liveA, nil)
	if err := db.CreateSubscription(ctx, other, nil, nil, nil, idemRecord(liveA, "sub-key-0001", "x")); !errors.Is(err, ports.ErrIdempotencyKeyExists) {
		t.Errorf("reused key: %v", err)
	}
	if _, err := db.GetSubscription(ctx, liveA, other.ID()); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("the second create was written: %v", err)
	}
}
