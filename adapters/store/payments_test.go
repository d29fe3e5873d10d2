package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

func TestPaymentStore(t *testing.T) {
	t.Parallel()
	for _, d := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"postgres", testenv.PostgresDSN}, {"sqlite", testenv.SQLiteDSN}} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			db := openStore(t, d.dsn(t))
			testLedgerWritesWithCharge(t, db)
			testListPaymentsTotals(t, db)
			testAggregateDayTotals(t, db)
			testListScopeRefunds(t, db)
			testUpdateChargesBatch(t, db)
			testUpdateChargesFailsAsAWhole(t, db)
			testRefundChargeOwnOutcomes(t, db)
			testClaimOpenRefunds(t, db)
			testConcurrentBatchesLoseNothing(t, db)
			testFoldDuringWrites(t, db)
		})
	}
}

// paid creates a charge of testA and settles it through UpdateCharge with
// its payment entry.
func paid(t *testing.T, db *store.DB, amount int64) *domain.Charge {
	t.Helper()
	return paidIn(t, db, testA, amount)
}

// paidIn is paid in another scope.
func paidIn(t *testing.T, db *store.DB, scope ports.Scope, amount int64) *domain.Charge {
	t.Helper()
	now := baseTime
	c := newCharge(t, scope, now, func(p *domain.NewChargeParams) { p.Amount = amount })
	attachPix(t, c, now)
	mustCreate(t, db, c, nil, nil)
	err := db.UpdateCharge(t.Context(), scope, c.ID(), func(_ context.Context, c *domain.Charge, _ ports.ChargeTx) (ports.ChargeChange, error) {
		if err := c.Transition(domain.TxPaid, domain.MethodPix, nil, "E99999999202603011200abcdefghijk", now); err != nil {
			return ports.ChargeChange{}, err
		}
		es, err := domain.PaymentEntries(func() (string, error) { return newRawID(t), nil }, c, domain.DefaultHoldingPeriods, false, domain.Debts{}, now)
		return ports.ChargeChange{Entries: es}, err
	})
	if err != nil {
		t.Fatalf("settle: %v", err)
	}
	return c
}

func testLedgerWritesWithCharge(t *testing.T, db *store.DB) {
	ctx := t.Context()
	c := paid(t, db, 1000)
	ws, err := db.Wallets(ctx, testA)
	if err != nil || len(ws) != 1 || ws[0].Available != 1000 {
		t.Fatalf("wallets after payment: %+v %v", ws, err)
	}
	// A debit larger than the wallet rolls the whole change back.
	err = db.UpdateCharge(ctx, testA, c.ID(), func(ctx context.Context, c *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
		if err := c.ReserveRefund(1000, baseTime); err != nil {
			return ports.ChargeChange{}, err
		}
		r := domain.Refund{ID: newRawID(t), ChargeID: c.ID(), AccountID: testA.AccountID, Mode: testA.Mode, Amount: 1000,
			Currency: "BRL", Status: domain.RefundPending, CreatedAt: baseTime, UpdatedAt: baseTime}
		// Claim more than the locked balance holds: the store must refuse.
		e, err := domain.RefundEntry(newRawID(t), r, 0, domain.Balance{Currency: "BRL", Available: 5000}, baseTime)
		if err != nil {
			return ports.ChargeChange{}, err
		}
		e.Postings[0].Amount, e.Postings[1].Amount = -2000, 2000
		return ports.ChargeChange{Entries: []domain.JournalEntry{e}, Refunds: []domain.Refund{r}}, nil
	})
	if !errors.Is(err, domain.ErrInsufficientBalance) {
		t.Fatalf("overdraft: %v, want ErrInsufficientBalance", err)
	}
	got := mustGet(t, db, testA, c.ID())
	if got.RefundedAmount() != 0 {
		t.Errorf("rolled-back change left refunded %d", got.RefundedAmount())
	}
	if rs, _ := db.ListRefunds(ctx, testA, c.ID()); len(rs) != 0 {
		t.Errorf("rolled-back refund stored: %+v", rs)
	}
	// An idempotency key used before writes nothing.
	rec := &ports.IdempotencyRecord{IdempotencyKey: ports.IdempotencyKey{Scope: testA, Key: "refund-key-1"}, Fingerprint: "f",
		StatusCode: 201, Body: []byte("{}"), CreatedAt: baseTime}
	mustCreate(t, db, newCharge(t, testA, baseTime, nil), nil, rec)
	err = db.UpdateCharge(ctx, testA, c.ID(), func(context.Context, *domain.Charge, ports.ChargeTx) (ports.ChargeChange, error) {
		return ports.ChargeChange{Idempotency: rec}, nil
	})
	if !errors.Is(err, ports.ErrIdempotencyKeyExists) {
		t.Errorf("reused key: %v", err)
	}
	tot, err := db.LedgerTotals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if p := domain.VerifyLedger(tot.Unbalanced, tot.Posted, tot.Stored, tot.Held); len(p) != 0 {
		t.Errorf("ledger: %v", p)
	}
}

func testListPaymentsTotals(t *testing.T, db *store.DB) {
	ctx := t.Context()
	scope := ports.Scope{AccountID: "acct_totals", Mode: domain.ModeLive}
	var ids []string
	for i := range 5 {
		c := newCharge(t, scope, baseTime.Add(time.Duration(i)*time.Minute), nil)
		attachPix(t, c, baseTime)
		mustCreate(t, db, c, nil, nil)
		ids = append(ids, c.ID())
	}
	err := db.UpdateCharge(ctx, scope, ids[0], changeEvents(func(c *domain.Charge) ([]domain.Event, error) { return nil, c.Cancel(baseTime) }))
	if err != nil {
		t.Fatal(err)
	}
	// The totals are the same with the counter deltas pending and folded.
	for _, stage := range []string{"pending", "folded"} {
		if stage == "folded" {
			mustFold(t, db)
		}
		for _, tt := range []struct {
			status domain.TxStatus
			after  *time.Time
			want   int
		}{{"", nil, 5}, {domain.TxCancelled, nil, 1}, {domain.TxWaitingPayment, nil, 4}, {"", ptr(micro(baseTime).Add(2 * time.Minute)), 3}} {
			cs, total, err := db.ListPayments(ctx, ports.PaymentQuery{Scope: scope, Page: 1, Limit: 2, Status: tt.status, CreatedAfter: tt.after, Desc: true})
			if err != nil || total != tt.want || len(cs) != min(2, tt.want) {
				t.Errorf("%s: status %q after %v: %d charges, total %d, err %v; want total %d", stage, tt.status, tt.after, len(cs), total, err, tt.want)
			}
		}
	}
	if _, _, err := db.ListPayments(ctx, ports.PaymentQuery{Scope: scope, Page: 1, Limit: 2, SortBy: "nope"}); !errors.Is(err, domain.ErrValidation) {
		t.Errorf("unknown sortBy: %v", err)
	}
}

// testAggregateDayTotals checks the per-day totals AggregatePayments reads
// for day-aligned windows against a scan of the same charges (a window
// starting one microsecond earlier, which no charge falls in), after
// creates, settlements, cancellations, expiries and refunds, and against
// figures worked out by hand.
func testAggregateDayTotals(t *testing.T, db *store.DB) {
	ctx := t.Context()
	scope := ports.Scope{AccountID: "acct_day_totals", Mode: domain.ModeLive}
	day0 := baseTime.Truncate(24*time.Hour).AddDate(0, 0, -2)
	createdAt := map[string]time.Time{}
	create := func(at time.Time, amount int64) string {
		t.Helper()
		c := newCharge(t, scope, at, func(p *domain.NewChargeParams) { p.Amount = amount })
		attachPix(t, c, at)
		mustCreate(t, db, c, nil, nil)
		createdAt[c.ID()] = at
		return c.ID()
	}
	settle := func(id string, at time.Time) {
		t.Helper()
		err := db.UpdateCharge(ctx, scope, id, func(_ context.Context, c *domain.Charge, _ ports.ChargeTx) (ports.ChargeChange, error) {
			return ports.ChargeChange{}, c.Transition(domain.TxPaid, domain.MethodPix, nil, "E99999999202603011200abcdefghijk", at)
		})
		if err != nil {
			t.Fatalf("settle %s: %v", id, err)
		}
	}
	refund := func(id string, amount int64, at time.Time) {
		t.Helper()
		err := db.UpdateCharge(ctx, scope, id, changeEvents(func(c *domain.Charge) ([]domain.Event, error) {
			if err := c.ReserveRefund(amount, at); err != nil {
				return nil, err
			}
			return nil, c.CompleteRefund(amount, at)
		}))
		if err != nil {
			t.Fatalf("refund %s: %v", id, err)
		}
	}
	before := create(day0.Add(-2*time.Microsecond), 700) // outside both windows
	edge := create(day0, 1000)                           // first instant of the window
	late := create(day0.Add(24*time.Hour-time.Microsecond), 2000)
	partly := create(day0.Add(30*time.Hour), 3000)
	fully := create(day0.Add(31*time.Hour), 4000)
	cancelled := create(day0.Add(32*time.Hour), 5000)
	expired := create(day0.Add(50*time.Hour), 6000)
	create(day0.Add(51*time.Hour), 7000) // stays waiting
	for _, id := range []string{before, edge, late, partly, fully} {
		settle(id, createdAt[id].Add(time.Minute)) // paid in time; the totals go by the day of creation
	}
	refund(partly, 1000, day0.Add(53*time.Hour))
	refund(fully, 4000, day0.Add(53*time.Hour))
	err := db.UpdateCharge(ctx, scope, cancelled, changeEvents(func(c *domain.Charge) ([]domain.Event, error) { return nil, c.Cancel(day0.Add(53 * time.Hour)) }))
	if err != nil {
		t.Fatal(err)
	}
	err = db.UpdateCharge(ctx, scope, expired, changeEvents(func(c *domain.Charge) ([]domain.Event, error) { return nil, c.Expire(day0.Add(53 * time.Hour)) }))
	if err != nil {
		t.Fatal(err)
	}
	// An update that changes nothing the totals hold writes no delta.
	err = db.UpdateCharge(ctx, scope, edge, changeEvents(func(c *domain.Charge) ([]domain.Event, error) { return nil, nil }))
	if err != nil {
		t.Fatal(err)
	}
	key := func(a ports.PaymentAggregate) string {
		return fmt.Sprintf("%s %s %s %s n=%d v=%d r=%d", a.Day, a.Currency, a.Status, a.PaidWith, a.Count, a.Volume, a.Refunded)
	}
	aggregate := func(since time.Time, cur domain.Currency) []string {
		t.Helper()
		aggs, err := db.AggregatePayments(ctx, scope, since, cur)
		if err != nil {
			t.Fatalf("AggregatePayments(%v): %v", since, err)
		}
		out := make([]string, len(aggs))
		for i, a := range aggs {
			out[i] = key(a)
		}
		slices.Sort(out)
		return out
	}
	d := func(i int) string { return day0.AddDate(0, 0, i).Format(time.DateOnly) }
	want := []string{
		d(0) + " BRL PAID PIX n=2 v=3000 r=0",
		d(1) + " BRL CANCELLED  n=1 v=5000 r=0",
		d(1) + " BRL PAID PIX n=1 v=3000 r=1000",
		d(1) + " BRL REFUNDED PIX n=1 v=4000 r=4000",
		d(2) + " BRL EXPIRED  n=1 v=6000 r=0",
		d(2) + " BRL WAITING_PAYMENT  n=1 v=7000 r=0",
	}
	// The same with the counter deltas pending, folded, and folded with
	// more pending (the expiry of the waiting charge, then put back by
	// hand as the inverse delta would).
	for _, stage := range []string{"pending", "folded"} {
		if stage == "folded" {
			mustFold(t, db)
		}
		for _, tt := range []struct {
			name  string
			since time.Time
			cur   domain.Currency
			want  []string
		}{
			{"totals", day0, "", want},
			{"scan", day0.Add(-time.Microsecond), "", want},
			{"totals BRL", day0, domain.CurrencyBRL, want},
			{"totals other currency", day0, "EUR", []string{}},
			{"totals last day", day0.AddDate(0, 0, 2), "", want[4:]},
			{"scan last day", day0.AddDate(0, 0, 2).Add(-time.Microsecond), "", want[4:]},
		} {
			if got := aggregate(tt.since, tt.cur); !slices.Equal(got, tt.want) {
				t.Errorf("%s, %s: aggregates\n%q\nwant\n%q", stage, tt.name, got, tt.want)
			}
		}
	}
	if n, err := db.FoldChargeStats(ctx); n != 0 || err != nil {
		t.Errorf("a second fold moved %d deltas (%v), want none left", n, err)
	}
}

// mustFold folds every pending counter delta and checks it moved some.
func mustFold(t *testing.T, db *store.DB) {
	t.Helper()
	n, err := db.FoldChargeStats(t.Context())
	if err != nil || n == 0 {
		t.Fatalf("fold: moved %d deltas, %v; want some", n, err)
	}
}

func ptr[T any](v T) *T { return &v }

// testListScopeRefunds: the refunds of every charge of one scope, newest
// first, paged, and nothing of another mode.
func testListScopeRefunds(t *testing.T, db *store.DB) {
	ctx := t.Context()
	scope := ports.Scope{AccountID: "acct_" + newRawID(t), Mode: domain.ModeTest}
	var want []string
	for i := range 3 {
		c := newCharge(t, scope, baseTime, nil)
		mustCreate(t, db, c, nil, nil)
		at := baseTime.Add(time.Duration(i) * time.Minute)
		r := domain.Refund{ID: newRawID(t), ChargeID: c.ID(), AccountID: scope.AccountID, Mode: scope.Mode, Amount: int64(100 + i),
			Currency: "BRL", Status: domain.RefundPending, CreatedAt: at, UpdatedAt: at}
		err := db.UpdateCharge(ctx, scope, c.ID(), func(context.Context, *domain.Charge, ports.ChargeTx) (ports.ChargeChange, error) {
			return ports.ChargeChange{Refunds: []domain.Refund{r}}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want = append([]string{r.ID}, want...)
	}
	page, more, err := db.ListScopeRefunds(ctx, ports.RefundQuery{Scope: scope, Limit: 2})
	if err != nil || !more || len(page) != 2 || page[0].ID != want[0] || page[1].ID != want[1] || page[0].Amount != 102 {
		t.Fatalf("first page: %+v more=%v, %v", page, more, err)
	}
	page, more, err = db.ListScopeRefunds(ctx, ports.RefundQuery{Scope: scope, Limit: 2, Offset: 2})
	if err != nil || more || len(page) != 1 || page[0].ID != want[2] {
		t.Fatalf("second page: %+v more=%v, %v", page, more, err)
	}
	live := ports.Scope{AccountID: scope.AccountID, Mode: domain.ModeLive}
	if rs, _, err := db.ListScopeRefunds(ctx, ports.RefundQuery{Scope: live, Limit: 10}); err != nil || len(rs) != 0 {
		t.Fatalf("live mode sees %d test refunds, %v", len(rs), err)
	}
}

// testFoldDuringWrites folds the counters from several goroutines while
// charges are created and settled: every count stays exact (the
// incremental counters agree with the charges: VerifyDerived), whether the
// last deltas are still pending or folded.
func testFoldDuringWrites(t *testing.T, db *store.DB) {
	scope := ports.Scope{AccountID: "acct_fold", Mode: domain.ModeLive}
	ctx := t.Context()
	const writers, each = 4, 15
	var wg sync.WaitGroup
	stop := make(chan struct{})
	folded := make(chan int, 2)
	for range 2 {
		go func() {
			total := 0
			defer func() { folded <- total }()
			for {
				select {
				case <-stop:
					return
				default:
				}
				n, err := db.FoldChargeStats(ctx)
				if err != nil {
					t.Errorf("fold: %v", err)
					return
				}
				total += n
			}
		}()
	}
	for range writers {
		wg.Go(func() {
			for i := range each {
				if i%3 == 0 {
					paidIn(t, db, scope, 1000)
					continue
				}
				c := newCharge(t, scope, baseTime, nil)
				attachPix(t, c, baseTime)
				mustCreate(t, db, c, nil, nil)
			}
		})
	}
	wg.Wait()
	close(stop)
	if moved := <-folded + <-folded; moved == 0 {
		t.Error("no fold moved anything while the writes ran")
	}
	check := func(stage string) {
		t.Helper()
		_, total, err := db.ListPayments(ctx, ports.PaymentQuery{Scope: scope, Page: 1, Limit: 1})
		if err != nil || total != writers*each {
			t.Errorf("%s: total %d (%v), want %d", stage, total, err, writers*each)
		}
		_, paidN, err := db.ListPayments(ctx, ports.PaymentQuery{Scope: scope, Page: 1, Limit: 1, Status: domain.TxPaid})
		if err != nil || paidN != writers*5 {
			t.Errorf("%s: paid %d (%v), want %d", stage, paidN, err, writers*5)
		}
		// Other checks of this database leave refunds without entries on
		// purpose: only this account's problems count.
		problems, err := db.VerifyDerived(ctx)
		problems = slices.DeleteFunc(problems, func(p string) bool { return !strings.Contains(p, scope.AccountID) })
		if err != nil || len(problems) != 0 {
			t.Errorf("%s: verify: %v %q", stage, err, problems)
		}
	}
	check("after the writes")
	if _, err := db.FoldChargeStats(ctx); err != nil {
		t.Fatal(err)
	}
	check("folded")
}
