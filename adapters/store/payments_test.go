package store_test

import (
	"context"
	"errors"
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
		})
	}
}

// paid creates a charge of testA and settles it through UpdateChargeTx with
// its payment entry.
func paid(t *testing.T, db *store.DB, amount int64) *domain.Charge {
	t.Helper()
	now := baseTime
	c := newCharge(t, testA, now, func(p *domain.NewChargeParams) { p.Amount = amount })
	attachPix(t, c, now)
	mustCreate(t, db, c, nil, nil)
	err := db.UpdateChargeTx(t.Context(), testA, c.ID(), func(_ context.Context, c *domain.Charge, _ ports.ChargeTx) (ports.ChargeChange, error) {
		if err := c.Transition(domain.TxPaid, domain.MethodPix, nil, "E99999999202603011200abcdefghijk", now); err != nil {
			return ports.ChargeChange{}, err
		}
		e, err := domain.PaymentEntry(newRawID(t), c, domain.DefaultHoldingPeriods, now)
		return ports.ChargeChange{Entries: []domain.JournalEntry{e}}, err
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
	err = db.UpdateChargeTx(ctx, testA, c.ID(), func(ctx context.Context, c *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
		if err := c.ReserveRefund(1000, baseTime); err != nil {
			return ports.ChargeChange{}, err
		}
		r := domain.Refund{ID: newRawID(t), ChargeID: c.ID(), AccountID: testA.AccountID, Mode: testA.Mode, Amount: 1000,
			Currency: "BRL", Status: domain.RefundPending, CreatedAt: baseTime, UpdatedAt: baseTime}
		// Claim more than the locked balance holds: the store must refuse.
		e, err := domain.RefundEntry(newRawID(t), r, domain.Balance{Currency: "BRL", Available: 5000}, baseTime)
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
	err = db.UpdateChargeTx(ctx, testA, c.ID(), func(context.Context, *domain.Charge, ports.ChargeTx) (ports.ChargeChange, error) {
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
	err := db.UpdateCharge(ctx, scope, ids[0], func(c *domain.Charge) ([]domain.Event, error) { return nil, c.Cancel(baseTime) })
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		status domain.TxStatus
		after  *time.Time
		want   int
	}{{"", nil, 5}, {domain.TxCancelled, nil, 1}, {domain.TxWaitingPayment, nil, 4}, {"", ptr(micro(baseTime).Add(2 * time.Minute)), 3}} {
		cs, total, err := db.ListPayments(ctx, ports.PaymentQuery{Scope: scope, Page: 1, Limit: 2, Status: tt.status, CreatedAfter: tt.after, Desc: true})
		if err != nil || total != tt.want || len(cs) != min(2, tt.want) {
			t.Errorf("status %q after %v: %d charges, total %d, err %v; want total %d", tt.status, tt.after, len(cs), total, err, tt.want)
		}
	}
	if _, _, err := db.ListPayments(ctx, ports.PaymentQuery{Scope: scope, Page: 1, Limit: 2, SortBy: "nope"}); !errors.Is(err, domain.ErrValidation) {
		t.Errorf("unknown sortBy: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }
