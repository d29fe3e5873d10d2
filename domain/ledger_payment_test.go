package domain_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

// seqIDs numbers the entries it names: je_1, je_2, …
func seqIDs() func() (string, error) {
	n := 0
	return func() (string, error) {
		n++
		return fmt.Sprintf("je_%d", n), nil
	}
}

// postedTo sums what entries post to account.
func postedTo(entries []domain.JournalEntry, account domain.LedgerAccount) int64 {
	var sum int64
	for _, e := range entries {
		for _, p := range e.Postings {
			if p.Account == account {
				sum += p.Amount
			}
		}
	}
	return sum
}

// paidDueCharge is dueCharge settled by a payment of amount at at.
func paidDueCharge(t *testing.T, amount int64, at time.Time, fees domain.FeeSchedule) *domain.Charge {
	t.Helper()
	c := dueCharge(t)
	pay := chargePayment("")
	pay.Amount, pay.PaidAt = amount, at
	if got, err := c.SettlePix(pay, fees); err != nil || got != domain.OutcomePaid {
		t.Fatalf("SettlePix(%d at %v) = %q, %v", amount, at, got, err)
	}
	return c
}

// TestPaymentEntriesBookTheFineAndInterestApart: a late payment of a
// due-date charge is one payment entry of the principal and one entry
// each for the fine and the interest; an early one is one payment entry of
// the discounted amount. Together they post exactly what one entry of the
// whole amount would: the acquirer debited the amount paid, the fees once,
// the merchant credited the net.
func TestPaymentEntriesBookTheFineAndInterestApart(t *testing.T) {
	t.Parallel()
	late := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)  // 10000 + fine 200 + interest 2 × 10
	early := time.Date(2026, 11, 25, 2, 0, 0, 0, time.UTC) // 10000 − discount 100
	for _, tc := range []struct {
		name   string
		amount int64
		at     time.Time
		kinds  map[domain.EntryKind]int64 // kind → amount taken from the acquirer
	}{
		{"late", 10_220, late, map[domain.EntryKind]int64{domain.EntryPayment: 10_000, domain.EntryDueFine: 200, domain.EntryDueInterest: 20}},
		{"early", 9_900, early, map[domain.EntryKind]int64{domain.EntryPayment: 9_900}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := paidDueCharge(t, tc.amount, tc.at, chargePixFees)
			es, err := domain.PaymentEntries(seqIDs(), c, nil, false, domain.Debts{}, tc.at)
			if err != nil {
				t.Fatal(err)
			}
			got := map[domain.EntryKind]int64{}
			for _, e := range es {
				if err := e.Validate(); err != nil {
					t.Error(err)
				}
				got[e.Kind] -= postedTo([]domain.JournalEntry{e}, domain.LedgerAcquirer)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.kinds) {
				t.Errorf("entries take %v from the acquirer, want %v", got, tc.kinds)
			}
			fees := c.Fees()
			if p, pl := postedTo(es, domain.LedgerProviderFees), postedTo(es, domain.LedgerPlatformFees); p != fees.Provider || pl != fees.Platform {
				t.Errorf("fees posted %d + %d, want %+v", p, pl, fees)
			}
			if got, want := postedTo(es, domain.LedgerAvailable), fees.Net(tc.amount); got != want {
				t.Errorf("merchant credited %d, want the net %d", got, want)
			}
		})
	}
}

// TestPaymentEntriesTakeFeesAndDebtInOrder: fees and the merchant's debt
// are taken from the principal first, then the fine, then the interest, so
// no entry credits the merchant a negative amount even when they exceed
// the principal, and the debt repaid is what one entry would repay.
func TestPaymentEntriesTakeFeesAndDebtInOrder(t *testing.T) {
	t.Parallel()
	late := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	fees := domain.FeeSchedule{Provider: domain.Fee{Fixed: 9_950}, Platform: domain.Fee{Fixed: 100}}
	c := paidDueCharge(t, 10_220, late, fees)
	for _, owed := range []int64{0, 100, 10_000} {
		es, err := domain.PaymentEntries(seqIDs(), c, nil, false, domain.Debts{Owed: owed}, late)
		if err != nil {
			t.Fatalf("owed %d: %v", owed, err)
		}
		for _, e := range es {
			for _, p := range e.Postings {
				if p.Account == domain.LedgerAvailable && p.Amount < 0 {
					t.Errorf("owed %d: entry %s (%s) debits the merchant %d", owed, e.ID, e.Kind, p.Amount)
				}
			}
		}
		net := c.Fees().Net(10_220)
		repaid := min(net, owed)
		if got := postedTo(es, domain.LedgerMerchantOwed); got != repaid {
			t.Errorf("owed %d: repaid %d, want %d", owed, got, repaid)
		}
		if got := postedTo(es, domain.LedgerAvailable); got != net-repaid {
			t.Errorf("owed %d: merchant credited %d, want %d", owed, got, net-repaid)
		}
	}
}

// TestPaymentEntriesHoldEachPart: with a holding period every part's
// credit is pending until the same release time.
func TestPaymentEntriesHoldEachPart(t *testing.T) {
	t.Parallel()
	late := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	c := paidDueCharge(t, 10_220, late, chargePixFees)
	hold := domain.HoldingPeriods{domain.MethodPix: 24 * time.Hour}
	es, err := domain.PaymentEntries(seqIDs(), c, hold, true, domain.Debts{}, late)
	if err != nil || len(es) != 3 {
		t.Fatalf("PaymentEntries = %d entries, %v; want 3", len(es), err)
	}
	for _, e := range es {
		for _, p := range e.Postings {
			switch p.Account {
			case domain.LedgerAvailable, domain.LedgerAcquirer:
				t.Errorf("entry %s (%s) posts to %s", e.ID, e.Kind, p.Account)
			case domain.LedgerPending:
				if !p.ReleaseAt.Equal(late.Add(24 * time.Hour)) {
					t.Errorf("entry %s releases at %v", e.ID, p.ReleaseAt)
				}
			}
		}
	}
	if got := postedTo(es, domain.LedgerPayerFunds); got != -10_220 {
		t.Errorf("took %d from payer funds, want 10220", -got)
	}
}
