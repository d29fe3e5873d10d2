package store_test

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// TestPayoutStore is the payout contract, on both databases.
func TestPayoutStore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  func(t *testing.T, db *store.DB)
	}{
		{"CreateHoldsAndLifecycleSettles", testPayoutLifecycle},
		{"InsufficientBalanceWritesNothing", testPayoutInsufficient},
		{"ReusedKeyWritesNothing", testPayoutReusedKey},
		{"ListCursorAndStatus", testPayoutList},
		{"ClaimLeasesAndFindBySendID", testPayoutClaim},
		{"ConcurrentCreatesNeverOverdraw", testPayoutConcurrent},
		{"UpdateManyInOneTransaction", testPayoutUpdateMany},
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

// fund credits scope's available balance with amount through a paid
// charge.
func fund(t *testing.T, db *store.DB, scope ports.Scope, amount int64) {
	t.Helper()
	paidIn(t, db, scope, amount)
}

func newPayout(t *testing.T, scope ports.Scope, amount, fee int64, at time.Time) *domain.Payout {
	t.Helper()
	k, err := domain.ParsePixKey("529.982.247-25", "")
	if err != nil {
		t.Fatal(err)
	}
	id := newRawID(t)
	p, err := domain.NewPayout(domain.NewPayoutParams{ID: id, AccountID: scope.AccountID, Mode: scope.Mode, Amount: amount, Fee: fee,
		Key: k, Description: "saque", Metadata: map[string]any{"n": "1"}, SendID: domain.DeriveTxID(id), Now: at})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// createPayout writes p with its hold and creation events.
func createPayout(db *store.DB, p *domain.Payout, rec *ports.IdempotencyRecord) error {
	evs, err := domain.NewPayoutEvents(p, "", func() (string, error) { return domain.NewRawID(rand.Reader) }, p.Snapshot().CreatedAt)
	if err != nil {
		return err
	}
	id, _ := domain.NewRawID(rand.Reader)
	return db.CreatePayout(context.Background(), p, evs, []domain.JournalEntry{domain.PayoutEntry(id, p, p.Snapshot().CreatedAt)}, rec)
}

// move changes a stored payout with change's status move, its events and
// entry, as app does.
func move(t *testing.T, db *store.DB, scope ports.Scope, id string, change func(*domain.Payout) error) error {
	t.Helper()
	return db.UpdatePayout(t.Context(), scope, id, func(_ context.Context, p *domain.Payout) (ports.PayoutChange, error) {
		prev := p.Status()
		if err := change(p); err != nil {
			return ports.PayoutChange{}, err
		}
		evs, err := domain.NewPayoutEvents(p, prev, func() (string, error) { return domain.NewRawID(rand.Reader) }, baseTime)
		if err != nil {
			return ports.PayoutChange{}, err
		}
		ch := ports.PayoutChange{Events: evs}
		if e, ok := domain.PayoutEntryFor(newRawID(t), p, prev, baseTime); ok {
			ch.Entries = append(ch.Entries, e)
		}
		return ch, nil
	})
}

func wallet(t *testing.T, db *store.DB, scope ports.Scope) domain.Balance {
	t.Helper()
	ws, err := db.Wallets(t.Context(), scope)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) == 0 {
		return domain.Balance{}
	}
	return ws[0].Balance
}

func assertLedgerClean(t *testing.T, db *store.DB) {
	t.Helper()
	tot, err := db.LedgerTotals(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	problems := domain.VerifyLedger(tot.Unbalanced, tot.Posted, tot.Stored, tot.Held)
	derived, err := db.VerifyDerived(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if problems = append(problems, derived...); len(problems) > 0 {
		t.Errorf("ledger verify: %v", problems)
	}
}

func testPayoutLifecycle(t *testing.T, db *store.DB) {
	fund(t, db, testA, 10000)
	p := newPayout(t, testA, 3000, 50, baseTime)
	if err := createPayout(db, p, nil); err != nil {
		t.Fatal(err)
	}
	if b := wallet(t, db, testA); b.Available != 10000-3050 {
		t.Errorf("available after create: %d, want %d", b.Available, 10000-3050)
	}
	got, err := db.GetPayout(t.Context(), testA, p.ID())
	if err != nil {
		t.Fatal(err)
	}
	if g, w := got.Snapshot(), p.Snapshot(); g.Key != w.Key || g.SendID != w.SendID || g.Status != domain.PayoutPending ||
		g.Metadata["n"] != "1" || !g.CreatedAt.Equal(micro(w.CreatedAt)) {
		t.Errorf("round trip: %+v, want %+v", g, w)
	}
	if _, err := db.GetPayout(t.Context(), liveA, p.ID()); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("payout read from the live scope: %v", err)
	}
	assertLedgerClean(t, db)
	if err := move(t, db, testA, p.ID(), func(p *domain.Payout) error { return p.MarkProcessing(baseTime) }); err != nil {
		t.Fatal(err)
	}
	if err := move(t, db, testA, p.ID(), func(p *domain.Payout) error { return p.MarkPaid("E1234", baseTime) }); err != nil {
		t.Fatal(err)
	}
	if b := wallet(t, db, testA); b.Available != 10000-3050 {
		t.Errorf("available after paid: %d", b.Available)
	}
	got, _ = db.GetPayout(t.Context(), testA, p.ID())
	if got.Status() != domain.PayoutPaid || got.Snapshot().EndToEndID != "E1234" || got.Snapshot().PaidAt.IsZero() {
		t.Errorf("paid payout: %+v", got.Snapshot())
	}
	// A change refused by fn writes nothing.
	err = move(t, db, testA, p.ID(), func(p *domain.Payout) error { return p.MarkFailed("invalid_key", baseTime) })
	if !errors.Is(err, domain.ErrPayoutNotOpen) {
		t.Errorf("fail after paid: %v", err)
	}
	// A failed payout gives amount and fee back.
	q := newPayout(t, testA, 1000, 50, baseTime.Add(time.Second))
	if err := createPayout(db, q, nil); err != nil {
		t.Fatal(err)
	}
	if err := move(t, db, testA, q.ID(), func(p *domain.Payout) error { return p.MarkFailed("account_closed", baseTime) }); err != nil {
		t.Fatal(err)
	}
	if b := wallet(t, db, testA); b.Available != 10000-3050 {
		t.Errorf("available after failed: %d", b.Available)
	}
	assertLedgerClean(t, db)
	// Drift: a paid payout that reads pending again is reported, by name.
	if _, err := db.Bun().ExecContext(t.Context(), "UPDATE payouts SET status = 'pending' WHERE id = ?", p.ID()); err != nil {
		t.Fatal(err)
	}
	derived, err := db.VerifyDerived(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(derived) != 2 || !strings.Contains(strings.Join(derived, "\n"), "payout po_"+p.ID()) {
		t.Errorf("planted payout drift: %q", derived)
	}
}

func testPayoutInsufficient(t *testing.T, db *store.DB) {
	fund(t, db, testA, 1000)
	p := newPayout(t, testA, 1000, 50, baseTime)
	if err := createPayout(db, p, nil); !errors.Is(err, domain.ErrInsufficientBalance) {
		t.Fatalf("create beyond available: %v, want ErrInsufficientBalance", err)
	}
	if _, err := db.GetPayout(t.Context(), testA, p.ID()); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("refused payout stored: %v", err)
	}
	if b := wallet(t, db, testA); b.Available != 1000 {
		t.Errorf("available after refusal: %d", b.Available)
	}
	// An account that never had money has no wallet at all.
	if err := createPayout(db, newPayout(t, liveB, 1, 0, baseTime), nil); !errors.Is(err, domain.ErrInsufficientBalance) {
		t.Errorf("create on an empty wallet: %v", err)
	}
	assertLedgerClean(t, db)
}

func testPayoutReusedKey(t *testing.T, db *store.DB) {
	fund(t, db, testA, 10000)
	rec := idemRecord(testA, "payout-key-1", "x")
	if err := createPayout(db, newPayout(t, testA, 100, 0, baseTime), rec); err != nil {
		t.Fatal(err)
	}
	p := newPayout(t, testA, 100, 0, baseTime)
	if err := createPayout(db, p, rec); !errors.Is(err, ports.ErrIdempotencyKeyExists) {
		t.Fatalf("reused key: %v", err)
	}
	if _, err := db.GetPayout(t.Context(), testA, p.ID()); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("payout of a reused key stored: %v", err)
	}
	if b := wallet(t, db, testA); b.Available != 9900 {
		t.Errorf("available: %d, want 9900", b.Available)
	}
}

func testPayoutList(t *testing.T, db *store.DB) {
	fund(t, db, testA, 100000)
	var ids []string
	for i := range 5 {
		p := newPayout(t, testA, 100, 0, baseTime.Add(time.Duration(i)*time.Second))
		if err := createPayout(db, p, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID())
	}
	if err := move(t, db, testA, ids[1], func(p *domain.Payout) error { return p.Cancel(baseTime) }); err != nil {
		t.Fatal(err)
	}
	page, more, err := db.ListPayouts(t.Context(), ports.PayoutQuery{Scope: testA, Limit: 2})
	if err != nil || !more || len(page) != 2 || page[0].ID() != ids[4] || page[1].ID() != ids[3] {
		t.Fatalf("first page: %v more=%v err=%v", len(page), more, err)
	}
	page, more, err = db.ListPayouts(t.Context(), ports.PayoutQuery{Scope: testA, Limit: 10, StartingAfter: ids[3]})
	if err != nil || more || len(page) != 3 || page[0].ID() != ids[2] {
		t.Fatalf("second page: %d more=%v err=%v", len(page), more, err)
	}
	page, _, err = db.ListPayouts(t.Context(), ports.PayoutQuery{Scope: testA, Limit: 10, Statuses: []domain.PayoutStatus{domain.PayoutCancelled}})
	if err != nil || len(page) != 1 || page[0].ID() != ids[1] {
		t.Errorf("status filter: %d %v", len(page), err)
	}
	if _, _, err := db.ListPayouts(t.Context(), ports.PayoutQuery{Scope: liveA, Limit: 10, StartingAfter: ids[3]}); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("cursor of another scope: %v", err)
	}
	if page, _, _ := db.ListPayouts(t.Context(), ports.PayoutQuery{Scope: liveA, Limit: 10}); len(page) != 0 {
		t.Errorf("other scope lists %d payouts", len(page))
	}
}

func testPayoutClaim(t *testing.T, db *store.DB) {
	fund(t, db, testA, 100000)
	a, b := newPayout(t, testA, 100, 0, baseTime), newPayout(t, testA, 100, 0, baseTime)
	for _, p := range []*domain.Payout{a, b} {
		if err := createPayout(db, p, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := move(t, db, testA, b.ID(), func(p *domain.Payout) error { return p.Cancel(baseTime) }); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	refs, err := db.ClaimPayouts(t.Context(), now, now.Add(time.Minute), 10)
	if err != nil || len(refs) != 1 || refs[0].ID != a.ID() || refs[0].Scope != testA {
		t.Fatalf("claim: %+v %v", refs, err)
	}
	if refs, _ := db.ClaimPayouts(t.Context(), now, now.Add(time.Minute), 10); len(refs) != 0 {
		t.Errorf("leased payout claimed again: %+v", refs)
	}
	if refs, _ := db.ClaimPayouts(t.Context(), now.Add(2*time.Minute), now.Add(3*time.Minute), 10); len(refs) != 1 {
		t.Errorf("lease did not end: %+v", refs)
	}
	ref, err := db.FindPayoutBySendID(t.Context(), a.SendID())
	if err != nil || ref.ID != a.ID() || ref.Scope != testA {
		t.Errorf("find by send id: %+v %v", ref, err)
	}
	if _, err := db.FindPayoutBySendID(t.Context(), "nope"); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("unknown send id: %v", err)
	}
}

// testPayoutUpdateMany is UpdatePayouts: each payout gets its own outcome
// and the changes fn made are saved together, with their events, entries
// and leases; a failure of the transaction saves none.
func testPayoutUpdateMany(t *testing.T, db *store.DB) {
	fund(t, db, testA, 100000)
	var ps []*domain.Payout
	for i := range 4 {
		p := newPayout(t, testA, 1000, 50, baseTime.Add(time.Duration(i)*time.Second))
		if err := createPayout(db, p, nil); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	if err := move(t, db, testA, ps[1].ID(), func(p *domain.Payout) error { return p.Cancel(baseTime) }); err != nil {
		t.Fatal(err)
	}
	status := func(p *domain.Payout) domain.PayoutStatus {
		t.Helper()
		got, err := db.GetPayout(t.Context(), testA, p.ID())
		if err != nil {
			t.Fatal(err)
		}
		return got.Status()
	}
	recheck := time.Now().Add(time.Hour)
	// paid marks a payout paid with its events and settlement entry.
	paid := func(_ context.Context, p *domain.Payout) (ports.PayoutChange, error) {
		prev := p.Status()
		if err := p.MarkPaid("E"+p.ID(), baseTime); err != nil {
			return ports.PayoutChange{}, err
		}
		evs, err := domain.NewPayoutEvents(p, prev, func() (string, error) { return domain.NewRawID(rand.Reader) }, baseTime)
		if err != nil {
			return ports.PayoutChange{}, err
		}
		ch := ports.PayoutChange{Events: evs, RecheckAt: recheck}
		if e, ok := domain.PayoutEntryFor(newRawID(t), p, prev, baseTime); ok {
			ch.Entries = append(ch.Entries, e)
		}
		return ch, nil
	}

	// A failed transaction saves nothing, not even the changes before it:
	// the last change takes the wallet below zero.
	big := newPayout(t, testA, 1_000_000, 0, baseTime)
	errs, err := db.UpdatePayouts(t.Context(), []ports.PayoutRef{{Scope: testA, ID: ps[0].ID()}, {Scope: testA, ID: ps[2].ID()}},
		func(ctx context.Context, p *domain.Payout) (ports.PayoutChange, error) {
			ch, err := paid(ctx, p)
			if p.ID() == ps[2].ID() {
				ch.Entries = append(ch.Entries, domain.PayoutEntry(newRawID(t), big, baseTime))
			}
			return ch, err
		})
	if !errors.Is(err, domain.ErrInsufficientBalance) || errs != nil {
		t.Fatalf("overdrawing batch: %v %v, want ErrInsufficientBalance alone", errs, err)
	}
	if status(ps[0]) != domain.PayoutPending || status(ps[2]) != domain.PayoutPending {
		t.Fatalf("a failed batch saved a change: %s %s", status(ps[0]), status(ps[2]))
	}
	// None named: nothing to do, and no error.
	if errs, err := db.UpdatePayouts(t.Context(), nil, paid); err != nil || len(errs) != 0 {
		t.Fatalf("no refs: %v %v", errs, err)
	}
	// A payout named twice is refused before anything runs.
	if _, err := db.UpdatePayouts(t.Context(), []ports.PayoutRef{{Scope: testA, ID: ps[0].ID()}, {Scope: testA, ID: ps[0].ID()}}, paid); err == nil {
		t.Fatal("a payout named twice was accepted")
	}

	before := wallet(t, db, testA)
	refs := []ports.PayoutRef{{Scope: testA, ID: ps[2].ID()}, {Scope: testA, ID: ps[1].ID()}, {Scope: liveA, ID: ps[3].ID()},
		{Scope: testA, ID: "nope"}, {Scope: testA, ID: ps[0].ID()}}
	errs, err = db.UpdatePayouts(t.Context(), refs, paid)
	if err != nil {
		t.Fatal(err)
	}
	want := []error{nil, domain.ErrPayoutNotOpen, ports.ErrNotFound, ports.ErrNotFound, nil}
	for i := range want {
		if !errors.Is(errs[i], want[i]) || (want[i] == nil) != (errs[i] == nil) {
			t.Errorf("outcome of ref %d: %v, want %v", i, errs[i], want[i])
		}
	}
	for p, st := range map[*domain.Payout]domain.PayoutStatus{ps[0]: domain.PayoutPaid, ps[1]: domain.PayoutCancelled,
		ps[2]: domain.PayoutPaid, ps[3]: domain.PayoutPending} {
		if got := status(p); got != st {
			t.Errorf("payout %s: %s, want %s", p.ID(), got, st)
		}
	}
	if got, _ := db.GetPayout(t.Context(), testA, ps[2].ID()); got.Snapshot().EndToEndID != "E"+ps[2].ID() {
		t.Errorf("end-to-end id not saved: %+v", got.Snapshot())
	}
	// Settling moves no money out of the available balance; the paid
	// events are the changes' own; the leases run to recheck.
	if after := wallet(t, db, testA); after.Available != before.Available {
		t.Errorf("available %d after settling, was %d", after.Available, before.Available)
	}
	assertLedgerClean(t, db)
	for _, p := range []*domain.Payout{ps[0], ps[2]} {
		var n int
		if err := db.Bun().NewRaw("SELECT count(*) FROM charge_events WHERE charge_id = ? AND 'payout.paid' IN (type, twin_type)", domain.PrefixPayout+p.ID()).
			Scan(t.Context(), &n); err != nil || n != 1 {
			t.Errorf("payout %s has %d paid events (%v)", p.ID(), n, err)
		}
	}
	claimed, err := db.ClaimPayouts(t.Context(), time.Now(), time.Now().Add(time.Minute), 10)
	if err != nil || len(claimed) != 1 || claimed[0].ID != ps[3].ID() {
		t.Errorf("claim after the batch: %+v %v, want only the pending payout", claimed, err)
	}
}

// testPayoutConcurrent races many payouts against one wallet: exactly as
// many as it covers commit, and it never goes below zero.
func testPayoutConcurrent(t *testing.T, db *store.DB) {
	fund(t, db, testA, 10000)
	const n = 40 // each takes 1000 + 50: 9 fit
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		ok, low int
	)
	for range n {
		p := newPayout(t, testA, 1000, 50, baseTime)
		wg.Go(func() {
			err := createPayout(db, p, nil)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.Is(err, domain.ErrInsufficientBalance):
				low++
			default:
				t.Errorf("create: %v", err)
			}
		})
	}
	wg.Wait()
	if ok != 9 || low != n-9 {
		t.Errorf("%d created and %d refused, want 9 and %d", ok, low, n-9)
	}
	if b := wallet(t, db, testA); b.Available != 10000-9*1050 {
		t.Errorf("available %d, want %d", b.Available, 10000-9*1050)
	}
	assertLedgerClean(t, db)
}

// TestConcurrentPayoutsShareCommits: on Postgres, payouts created at once
// go in shared batches (one commit, one WAL flush for many) and each
// still gets its own outcome — the payouts of two accounts, one of them
// short of funds for some, a repeated key among them.
func TestConcurrentPayoutsShareCommits(t *testing.T) {
	t.Parallel()
	db := openStore(t, testenv.PostgresDSN(t))
	fund(t, db, testA, 10000)
	fund(t, db, liveB, 100000)
	const n = 60
	var (
		wg                  sync.WaitGroup
		mu                  sync.Mutex
		okA, okB, low, dupe int
	)
	start := make(chan struct{})
	reused := &ports.IdempotencyRecord{IdempotencyKey: ports.IdempotencyKey{Scope: liveB, Key: "same-key"},
		Fingerprint: "fp", StatusCode: 201, Body: []byte(`{}`), CreatedAt: baseTime}
	for i := range n {
		scope := testA
		if i%2 == 1 {
			scope = liveB
		}
		p := newPayout(t, scope, 1000, 50, baseTime)
		var rec *ports.IdempotencyRecord
		if i == 1 || i == 3 {
			r := *reused
			r.ResourceID = p.ID()
			rec = &r
		}
		wg.Go(func() {
			<-start
			err := createPayout(db, p, rec)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && scope == testA:
				okA++
			case err == nil:
				okB++
			case errors.Is(err, domain.ErrInsufficientBalance):
				low++
			case errors.Is(err, ports.ErrIdempotencyKeyExists):
				dupe++
			default:
				t.Errorf("create: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	if okA != 9 || low != n/2-9 || okB != n/2-1 || dupe != 1 {
		t.Errorf("A: %d created, %d refused for funds (want 9, %d); B: %d created, %d refused as a repeated key (want %d, 1)",
			okA, low, n/2-9, okB, dupe, n/2-1)
	}
	if b := wallet(t, db, testA); b.Available != 10000-9*1050 {
		t.Errorf("A available %d, want %d", b.Available, 10000-9*1050)
	}
	if b := wallet(t, db, liveB); b.Available != 100000-int64(n/2-1)*1050 {
		t.Errorf("B available %d, want %d", b.Available, 100000-int64(n/2-1)*1050)
	}
	assertLedgerClean(t, db)
	if st := db.PayoutFlights(); st.Creates < n || st.Batches >= st.Creates {
		t.Errorf("payout batches: %d carrying %d payouts, want fewer batches than payouts (at least %d)", st.Batches, st.Creates, n)
	}
}
