package domain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

// paidSplitCharge is the fixture charge (10000, fees 99, net 9901) with
// splits attached and paid by Pix.
func paidSplitCharge(t testing.TB, items ...domain.Split) *domain.Charge {
	t.Helper()
	c, err := domain.NewCharge(chargeParams())
	if err != nil {
		t.Fatal(err)
	}
	sp, err := domain.NewSplits(items, domain.FeePayerPlatform, chargeAmount, chargeAmount-99)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AttachSplits(sp); err != nil {
		t.Fatal(err)
	}
	pix := domain.PixDetails{BRCode: chargeBRCode, TxID: chargePixTxID, ExpiresAt: chargeT0.Add(time.Hour)}
	if err := c.AttachPix(pix, "sandbox", "ref-1", chargeT0); err != nil {
		t.Fatal(err)
	}
	if got, err := c.SettlePix(chargePayment(""), chargePixFees); err != nil || got != domain.OutcomePaid {
		t.Fatalf("SettlePix = %q, %v", got, err)
	}
	return c
}

// TestReverseSplits: refunds take back each split's share in proportion
// to what the charge has had taken back in all, rounded down, so partial
// refunds add up to a full refund's exact shares; reverseSplits names
// amounts instead and is refused when it does not fit.
func TestReverseSplits(t *testing.T) {
	t.Parallel()
	c := paidSplitCharge(t, domain.Split{Account: sellerA, Amount: 3000}, domain.Split{Account: sellerB, Percent: 1250})
	if shares, platform := c.SplitShares(); shares[0] != 3000 || shares[1] != 1237 || platform != 5664 {
		t.Fatalf("shares %v, platform %d", shares, platform)
	}
	take := func(amount int64, explicit []domain.SplitReversal) ([]int64, error) {
		t.Helper()
		if err := c.ReserveRefund(amount, chargeT0); err != nil {
			t.Fatal(err)
		}
		return c.ReverseSplits(amount, explicit)
	}
	for _, step := range []struct {
		amount int64
		want   []int64
	}{
		{3333, []int64{999, 412}},  // 3000 × 3333 / 10000 = 999.9; 1237 × 0.3333 = 412.3
		{3333, []int64{1000, 412}}, // 1999.8 → 1999 in all; 824.5 → 824
		{3334, []int64{1001, 413}}, // the rest: every share exactly
	} {
		got, err := take(step.amount, nil)
		if err != nil || got[0] != step.want[0] || got[1] != step.want[1] {
			t.Fatalf("take back %d: %v, %v; want %v", step.amount, got, err, step.want)
		}
	}
	for i, it := range c.Splits().Items {
		if shares, _ := c.SplitShares(); it.Reversed != shares[i] {
			t.Errorf("split %d gave back %d of its share %d after a full refund", i, it.Reversed, shares[i])
		}
	}

	c = paidSplitCharge(t, domain.Split{Account: sellerA, Amount: 3000}, domain.Split{Account: sellerB, Percent: 1250})
	for _, bad := range [][]domain.SplitReversal{
		{{Account: sellerA, Amount: 3001}},
		{{Account: "acct_ccccccccccccccccccccccccccccccccccc", Amount: 1}},
		{{Account: sellerA, Amount: 1}, {Account: sellerA, Amount: 1}},
		{{Account: sellerA, Amount: 900}, {Account: sellerB, Amount: 101}}, // 1001 of a refund of 1000
		{{Account: sellerA, Amount: -1}},
	} {
		if _, err := c.ReverseSplits(1000, bad); !errors.Is(err, domain.ErrSplitReversalInvalid) {
			t.Errorf("%v: %v, want ErrSplitReversalInvalid", bad, err)
		}
	}
	if got, err := c.ReverseSplits(1000, []domain.SplitReversal{{Account: sellerB, Amount: 1000}}); err != nil || got[0] != 0 || got[1] != 1000 {
		t.Errorf("explicit: %v, %v", got, err)
	}
	if got, err := c.ReverseSplits(1000, []domain.SplitReversal{}); err != nil || got[0] != 0 || got[1] != 0 {
		t.Errorf("explicitly none: %v, %v", got, err)
	}
	if err := c.RestoreSplits(map[string]int64{sellerB: 1001}); err == nil {
		t.Error("restored more than the split gave back")
	}
	if err := c.RestoreSplits(map[string]int64{sellerB: 1000}); err != nil || c.Splits().Items[1].Reversed != 0 {
		t.Errorf("restore: %v, %+v", err, c.Splits().Items[1])
	}
}

// FuzzReverseSplits: whatever the sequence of amounts taken back, no split
// ever gives back more than its share or a negative amount, each gives
// back at most its proportion of what was taken, the splits never give
// back more than a refund's amount, and taking back the whole amount in k
// refunds leaves each split at most k centavos of its share (each
// refund's rounding down). With none, the first
// refund has the platform bear it all (an empty reverse_splits): then the
// splits still never give back more than each refund's amount.
func FuzzReverseSplits(f *testing.F) {
	f.Add(int64(3000), uint16(1250), int64(1), int64(4999), int64(3), false)
	f.Add(int64(1), uint16(10000), int64(9999), int64(1), int64(0), false)
	f.Add(int64(5000), uint16(3000), int64(6000), int64(1), int64(0), true)
	f.Fuzz(func(t *testing.T, fixed int64, percent uint16, t1, t2, t3 int64, none bool) {
		fixed = 1 + abs64(fixed)%5000
		p := 1 + int64(percent)%4000
		c := paidSplitCharge(t, domain.Split{Account: sellerA, Amount: fixed}, domain.Split{Account: sellerB, Percent: p})
		shares, _ := c.SplitShares()
		var taken, k int64
		for i, amount := range []int64{t1, t2, t3, 0} {
			amount = min(1+abs64(amount)%chargeAmount, c.RefundableAmount())
			if i == 3 {
				amount = c.RefundableAmount() // the rest
			}
			if amount == 0 {
				break
			}
			if err := c.ReserveRefund(amount, chargeT0); err != nil {
				t.Fatal(err)
			}
			taken += amount
			k++
			var explicit []domain.SplitReversal
			if none && i == 0 {
				explicit = []domain.SplitReversal{}
			}
			got, err := c.ReverseSplits(amount, explicit)
			if err != nil {
				t.Fatal(err)
			}
			if got[0] < 0 || got[1] < 0 || got[0]+got[1] > amount {
				t.Fatalf("took back %v of a refund of %d", got, amount)
			}
			for i, it := range c.Splits().Items {
				if got[i] < 0 || it.Reversed > shares[i] || it.Reversed > shares[i]*taken/chargeAmount {
					t.Fatalf("split %d: gave back %d now, %d in all of its share %d after %d taken", i, got[i], it.Reversed, shares[i], taken)
				}
			}
		}
		for i, it := range c.Splits().Items {
			if !none && shares[i]-it.Reversed > k {
				t.Fatalf("split %d gave back %d of its share %d after a full refund in %d", i, it.Reversed, shares[i], k)
			}
		}
	})
}

func abs64(v int64) int64 {
	if v < 0 {
		if v == -v {
			return 0
		}
		return -v
	}
	return v
}

// TestSplitDebtEntries: a seller's reversal beyond its wallet is its debt,
// the platform's advance covers it (refused without a debt allowance when
// the platform cannot), the seller's next share repays the platform
// first, and a failed refund gives back what the seller repaid since as
// available money. Every entry balances.
func TestSplitDebtEntries(t *testing.T) {
	t.Parallel()
	now := chargeT0.Add(time.Hour)
	c := paidSplitCharge(t, domain.Split{Account: sellerA, Amount: 3000})
	rev, short, err := domain.SplitReversalEntry("e1", c, sellerA, "rf", 1000, domain.Balance{Available: 300, Pending: 200}, now)
	if err != nil || short != 500 || postedTo([]domain.JournalEntry{rev}, domain.LedgerMerchantOwed) != -500 ||
		postedTo([]domain.JournalEntry{rev}, domain.LedgerSplitsPayable) != 1000 {
		t.Fatalf("reversal: %+v, short %d, %v", rev, short, err)
	}
	if _, err := domain.SplitAdvanceEntry("e2", c, "rf", 500, domain.Balance{Available: 400}, false, now); !errors.Is(err, domain.ErrInsufficientBalance) {
		t.Errorf("an advance beyond the platform's wallet without debt: %v", err)
	}
	adv, err := domain.SplitAdvanceEntry("e3", c, "", 500, domain.Balance{Available: 400}, true, now)
	if err != nil || adv.AccountID != "acct_1" || postedTo([]domain.JournalEntry{adv}, domain.LedgerMerchantOwed) != -100 ||
		postedTo([]domain.JournalEntry{adv}, domain.LedgerSplitAdvances) != 500 {
		t.Fatalf("advance with debt: %+v, %v", adv, err)
	}

	// The seller's next share (3000) repays its 500 first: one repayment
	// entry pays the platform.
	es, err := domain.PaymentEntries(seqIDs(), paidSplitCharge(t, domain.Split{Account: sellerA, Amount: 3000}), nil, false,
		domain.Debts{SplitOwed: map[string]int64{sellerA: 500}}, now)
	if err != nil {
		t.Fatal(err)
	}
	var sellerAvail, repaid int64
	for _, e := range es {
		if err := e.Validate(); err != nil {
			t.Fatal(err)
		}
		for _, p := range e.Postings {
			switch {
			case e.Kind == domain.EntrySplit && p.Account == domain.LedgerAvailable:
				sellerAvail += p.Amount
			case e.Kind == domain.EntrySplitRepayment && p.Account == domain.LedgerAvailable && e.AccountID == "acct_1":
				repaid += p.Amount
			}
		}
	}
	if sellerAvail != 2500 || repaid != 500 {
		t.Errorf("seller credited %d, platform repaid %d; want 2500 and 500", sellerAvail, repaid)
	}

	// The refund fails after the seller repaid 200 of its 500: it gets
	// back its 500 of wallet money, cancels its 300 of debt left and gets
	// the 200 it repaid as available; the platform its advance less 200.
	d := domain.SplitDebit{Account: sellerA, RefundDebit: domain.RefundDebit{Available: 300, Pending: 200}, Owed: 500}
	back, gotRepaid, err := domain.SplitRestoredEntry("e4", c, "rf", d, domain.Balance{Owed: 300}, now)
	if err != nil || gotRepaid != 200 || postedTo([]domain.JournalEntry{back}, domain.LedgerAvailable) != 500 ||
		postedTo([]domain.JournalEntry{back}, domain.LedgerMerchantOwed) != 300 || postedTo([]domain.JournalEntry{back}, domain.LedgerPending) != 200 {
		t.Fatalf("restored: %+v, repaid %d, %v", back, gotRepaid, err)
	}
	advD := domain.SplitDebit{Advance: true, RefundDebit: domain.RefundDebit{Available: 400, Pending: 100}}
	advBack, err := domain.SplitAdvanceBackEntry("e5", c, "rf", advD, 200, now)
	if err != nil || postedTo([]domain.JournalEntry{advBack}, domain.LedgerSplitAdvances) != -300 ||
		postedTo([]domain.JournalEntry{advBack}, domain.LedgerAvailable) != 200 || postedTo([]domain.JournalEntry{advBack}, domain.LedgerPending) != 100 {
		t.Fatalf("advance back: %+v, %v", advBack, err)
	}
}
