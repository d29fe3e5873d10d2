package store_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// refundChange reserves amount of the locked charge as a new PENDING
// refund, with the debit computed from the balance tx reads; seen records
// that balance.
func refundChange(t *testing.T, amount int64, seen *[]int64) ports.ChargeChangeFunc {
	return func(ctx context.Context, c *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
		if err := c.ReserveRefund(amount, baseTime); err != nil {
			return ports.ChargeChange{}, err
		}
		bal, err := tx.Balance(ctx, c.Currency())
		if err != nil {
			return ports.ChargeChange{}, err
		}
		if seen != nil {
			*seen = append(*seen, bal.Available)
		}
		r := domain.Refund{ID: newRawID(t), ChargeID: c.ID(), AccountID: c.AccountID(), Mode: c.Mode(), Amount: amount,
			Currency: c.Currency(), Status: domain.RefundPending, CreatedAt: baseTime, UpdatedAt: baseTime}
		e, err := domain.RefundEntry(newRawID(t), r, 0, bal, baseTime)
		if err != nil {
			return ports.ChargeChange{}, err
		}
		ev, err := domain.RefundEvent(c, r, newRawID(t), baseTime)
		if err != nil {
			return ports.ChargeChange{}, err
		}
		return ports.ChargeChange{Events: []domain.Event{ev}, Entries: []domain.JournalEntry{e}, Refunds: []domain.Refund{r}}, nil
	}
}

func available(t *testing.T, db *store.DB, scope ports.Scope) int64 {
	t.Helper()
	ws, err := db.Wallets(t.Context(), scope)
	if err != nil || len(ws) != 1 {
		t.Fatalf("wallets of %v: %+v %v", scope, ws, err)
	}
	return ws[0].Available
}

// verifyDerived checks the counters, per-day totals, refund entries and
// ledger of the accounts of scopes (other tests share the database).
func verifyDerived(t *testing.T, db *store.DB, scopes ...ports.Scope) {
	t.Helper()
	all, err := db.VerifyDerived(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	for _, p := range all {
		for _, s := range scopes {
			if strings.Contains(p, "account "+s.AccountID+" ") {
				problems = append(problems, p)
			}
		}
	}
	if len(problems) != 0 {
		t.Errorf("VerifyDerived: %q", problems)
	}
	tot, err := db.LedgerTotals(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if p := domain.VerifyLedger(tot.Unbalanced, tot.Posted, tot.Stored, tot.Held); len(p) != 0 {
		t.Errorf("ledger: %v", p)
	}
}

// testUpdateChargesBatch: one transaction changes several charges; each
// change sees the wallet as the changes before it in the batch left it; a
// change that fails, a charge of another scope and a missing one are left
// out and reported at their index while the rest is written; counters and
// per-day totals follow every charge.
func testUpdateChargesBatch(t *testing.T, db *store.DB) {
	ctx := t.Context()
	scope := ports.Scope{AccountID: "acct_batch", Mode: domain.ModeTest}
	var cs []*domain.Charge
	for range 4 {
		cs = append(cs, paidIn(t, db, scope, 1000))
	}
	other := paidIn(t, db, ports.Scope{AccountID: "acct_batch_other", Mode: domain.ModeTest}, 1000)
	if got := available(t, db, scope); got != 4000 {
		t.Fatalf("available %d, want 4000", got)
	}
	refused := errors.New("refused by fn")
	var seen []int64
	full := cs[3].ID() // refunded in full: its status moves to REFUNDED
	refs := []ports.ChargeRef{{Scope: scope, ID: cs[0].ID()}, {Scope: scope, ID: cs[1].ID()}, {Scope: scope, ID: "nosuchcharge"},
		{Scope: scope, ID: other.ID()}, {Scope: scope, ID: cs[2].ID()}, {Scope: scope, ID: full}}
	errs, err := db.UpdateCharges(ctx, refs, func(ctx context.Context, c *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
		switch c.ID() {
		case cs[1].ID():
			return ports.ChargeChange{}, refused
		case full:
			ch, err := refundChange(t, 1000, &seen)(ctx, c, tx)
			if err != nil {
				return ch, err
			}
			if err := ch.Refunds[0].Advance(domain.RefundInProgress, baseTime); err != nil {
				return ch, err
			}
			if err := ch.Refunds[0].Advance(domain.RefundRefunded, baseTime); err != nil {
				return ch, err
			}
			if err := c.CompleteRefund(1000, baseTime); err != nil {
				return ch, err
			}
			ch.Entries = append(ch.Entries, domain.RefundSettledEntry(newRawID(t), ch.Refunds[0], baseTime))
			return ch, nil
		}
		return refundChange(t, 400, &seen)(ctx, c, tx)
	})
	if err != nil {
		t.Fatalf("UpdateCharges: %v", err)
	}
	want := []error{nil, refused, ports.ErrNotFound, ports.ErrNotFound, nil, nil}
	for i := range refs {
		if !errors.Is(errs[i], want[i]) || (want[i] == nil) != (errs[i] == nil) {
			t.Errorf("charge %d: %v, want %v", i, errs[i], want[i])
		}
	}
	// Three changes ran, each on the balance the earlier ones left.
	slices.Sort(seen)
	if len(seen) != 3 || seen[2] != 4000 || seen[1] >= seen[2] || seen[0] >= seen[1] || seen[0] < 2600 {
		t.Errorf("balances seen %v, want 4000 first and the batch's earlier debits after", seen)
	}
	if got := available(t, db, scope); got != 4000-400-400-1000 {
		t.Errorf("available %d, want %d", got, 4000-1800)
	}
	for i, wantRefunded := range []int64{400, 0, 400, 1000} {
		c := mustGet(t, db, scope, cs[i].ID())
		rs, err := db.ListRefunds(ctx, scope, c.ID())
		if err != nil || c.RefundedAmount() != wantRefunded || (wantRefunded == 0) != (len(rs) == 0) {
			t.Errorf("charge %d: refunded %d, refunds %d (%v); want %d", i, c.RefundedAmount(), len(rs), err, wantRefunded)
		}
	}
	if c := mustGet(t, db, scope, full); c.Status() != domain.TxRefunded {
		t.Errorf("fully refunded charge is %s", c.Status())
	}
	verifyDerived(t, db, scope)

	// A charge named twice is a mistake of the caller.
	if _, err := db.UpdateCharges(ctx, []ports.ChargeRef{refs[0], refs[0]}, refundChange(t, 1, nil)); err == nil {
		t.Error("a charge named twice was accepted")
	}
}

// testUpdateChargesFailsAsAWhole: a batch whose writing fails (a used
// idempotency key, an overdraft) writes none of its changes.
func testUpdateChargesFailsAsAWhole(t *testing.T, db *store.DB) {
	ctx := t.Context()
	scope := ports.Scope{AccountID: "acct_batch_fail", Mode: domain.ModeTest}
	a, b := paidIn(t, db, scope, 1000), paidIn(t, db, scope, 1000)
	refs := []ports.ChargeRef{{Scope: scope, ID: a.ID()}, {Scope: scope, ID: b.ID()}}
	rec := &ports.IdempotencyRecord{IdempotencyKey: ports.IdempotencyKey{Scope: scope, Key: "batch-key"}, Fingerprint: "f",
		StatusCode: 201, Body: []byte("{}"), CreatedAt: baseTime}
	mustCreate(t, db, newCharge(t, scope, baseTime, nil), nil, rec)
	_, err := db.UpdateCharges(ctx, refs, func(ctx context.Context, c *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
		ch, err := refundChange(t, 100, nil)(ctx, c, tx)
		if c.ID() == b.ID() {
			ch.Idempotency = rec
		}
		return ch, err
	})
	if !errors.Is(err, ports.ErrIdempotencyKeyExists) {
		t.Fatalf("batch with a used key: %v, want ErrIdempotencyKeyExists", err)
	}
	// Debits computed from a stale balance: the store refuses the batch.
	_, err = db.UpdateCharges(ctx, refs, func(ctx context.Context, c *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
		ch, err := refundChange(t, 900, nil)(ctx, c, tx)
		if err == nil {
			ch.Entries[0].Postings[0].Amount, ch.Entries[0].Postings[1].Amount = -1100, 1100
			ch.Refunds[0].Amount = 1100
		}
		return ch, err
	})
	if !errors.Is(err, domain.ErrInsufficientBalance) {
		t.Fatalf("overdrawing batch: %v, want ErrInsufficientBalance", err)
	}
	for _, id := range []string{a.ID(), b.ID()} {
		if c := mustGet(t, db, scope, id); c.RefundedAmount() != 0 {
			t.Errorf("failed batch left charge %s with refunded %d", id, c.RefundedAmount())
		}
		if rs, _ := db.ListRefunds(ctx, scope, id); len(rs) != 0 {
			t.Errorf("failed batch left refunds %+v", rs)
		}
	}
	if got := available(t, db, scope); got != 2000 {
		t.Errorf("available %d after failed batches, want 2000", got)
	}
}

// testClaimOpenRefunds: a claim returns open refunds whole, with how their
// charge was paid; a claimed refund is not claimed again until its lease
// ends; final refunds are never claimed.
func testClaimOpenRefunds(t *testing.T, db *store.DB) {
	ctx := t.Context()
	scope := ports.Scope{AccountID: "acct_claims", Mode: domain.ModeTest}
	c := paidIn(t, db, scope, 1000)
	var ids []string
	for range 3 {
		err := db.UpdateCharge(ctx, scope, c.ID(), func(ctx context.Context, c *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
			ch, err := refundChange(t, 100, nil)(ctx, c, tx)
			if err == nil {
				ch.Refunds[0].Reason = "claim test"
				ids = append(ids, ch.Refunds[0].ID)
			}
			return ch, err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Earlier tests left open refunds too: claim until ours are seen.
	now := time.Now()
	got := map[string]ports.OpenRefund{}
	for range 10 {
		rs, err := db.ClaimOpenRefunds(ctx, now, now.Add(time.Minute), 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) == 0 {
			break
		}
		for _, r := range rs {
			if _, again := got[r.ID]; again {
				t.Errorf("refund %s claimed twice within its lease", r.ID)
			}
			got[r.ID] = r
		}
	}
	for _, id := range ids {
		r, ok := got[id]
		if !ok {
			t.Fatalf("refund %s was not claimed", id)
		}
		if r.PaidWith != domain.MethodPix || r.Reason != "claim test" || r.Amount != 100 || r.Status != domain.RefundPending ||
			r.Scope() != scope || r.ChargeID != c.ID() {
			t.Errorf("claimed %+v", r)
		}
	}
	// After the lease, they come back.
	rs, err := db.ClaimOpenRefunds(ctx, now.Add(2*time.Minute), now.Add(3*time.Minute), 1000)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rs); n < len(ids) {
		t.Errorf("%d refunds claimed after the lease, want at least %d", n, len(ids))
	}
}

// testConcurrentBatchesLoseNothing: batches over overlapping charges, in
// any order, from many goroutines: none deadlocks and no update is lost.
func testConcurrentBatchesLoseNothing(t *testing.T, db *store.DB) {
	scope := ports.Scope{AccountID: "acct_batch_race", Mode: domain.ModeTest}
	var cs []ports.ChargeRef
	for range 6 {
		cs = append(cs, ports.ChargeRef{Scope: scope, ID: paidIn(t, db, scope, 1000).ID()})
	}
	const workers, rounds = 6, 5
	var (
		wg      sync.WaitGroup
		changed atomic.Int64
	)
	for w := range workers {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(w), 1))
			for range rounds {
				refs := slices.Clone(cs)
				rnd.Shuffle(len(refs), func(i, j int) { refs[i], refs[j] = refs[j], refs[i] })
				refs = refs[:2+rnd.IntN(len(refs)-1)]
				errs, err := db.UpdateCharges(context.Background(), refs, refundChange(t, 1, nil))
				if err == nil {
					for _, e := range errs {
						err = errors.Join(err, e)
					}
				}
				if err != nil {
					t.Errorf("UpdateCharges: %v", err)
					return
				}
				changed.Add(int64(len(refs)))
			}
		})
	}
	wg.Wait()
	var total int64
	for _, r := range cs {
		total += mustGet(t, db, scope, r.ID).RefundedAmount()
	}
	n := int64(0)
	for _, r := range cs {
		rs, _ := db.ListRefunds(t.Context(), scope, r.ID)
		n += int64(len(rs))
	}
	if total != changed.Load() || n != total || available(t, db, scope) != 6000-n {
		t.Errorf("refunded %d in %d refunds, available %d: updates were lost", total, n, available(t, db, scope))
	}
	verifyDerived(t, db, scope)
}

// testRefundChargeOwnOutcomes: concurrent RefundCharge calls of different
// charges, which the store may write in one transaction, each get the
// outcome they would have had alone — a used idempotency key fails only
// its own call (ErrIdempotencyKeyExists, nothing of it written), a change
// that refuses fails only its own, every other refund is written once.
func testRefundChargeOwnOutcomes(t *testing.T, db *store.DB) {
	ctx := t.Context()
	scope := ports.Scope{AccountID: "acct_refund_charge", Mode: domain.ModeTest}
	rec := &ports.IdempotencyRecord{IdempotencyKey: ports.IdempotencyKey{Scope: scope, Key: "used-key"}, Fingerprint: "f",
		StatusCode: 201, Body: []byte("{}"), CreatedAt: baseTime}
	mustCreate(t, db, newCharge(t, scope, baseTime, nil), nil, rec)
	const n = 24
	ids := make([]string, n)
	for i := range ids {
		ids[i] = paidIn(t, db, scope, 1000).ID()
	}
	errRefused := errors.New("refused")
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			errs[i] = db.RefundCharge(ctx, ports.ChargeRef{Scope: scope, ID: id},
				func(ctx context.Context, c *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
					if i == 7 {
						return ports.ChargeChange{}, errRefused
					}
					ch, err := refundChange(t, 100, nil)(ctx, c, tx)
					if i == 3 {
						ch.Idempotency = rec
					}
					return ch, err
				})
		})
	}
	wg.Wait()
	for i, id := range ids {
		want := 100
		switch i {
		case 3:
			if !errors.Is(errs[i], ports.ErrIdempotencyKeyExists) {
				t.Errorf("refund %d with a used key: %v, want ErrIdempotencyKeyExists", i, errs[i])
			}
			want = 0
		case 7:
			if !errors.Is(errs[i], errRefused) {
				t.Errorf("refused refund %d: %v, want its own error", i, errs[i])
			}
			want = 0
		default:
			if errs[i] != nil {
				t.Errorf("refund %d: %v", i, errs[i])
			}
		}
		rs, err := db.ListRefunds(ctx, scope, id)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(rs) * 100; got != want {
			t.Errorf("charge %d has %d refunds, want %d of 100", i, len(rs), want/100)
		}
	}
	verifyDerived(t, db, scope)
}
