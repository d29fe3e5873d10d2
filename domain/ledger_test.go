package domain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

func TestLedgerEntriesBalance(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	pix := settledCharge(t, 10000, domain.MethodPix, "BRL")
	es, err := domain.PaymentEntries(seqIDs(), pix, domain.DefaultHoldingPeriods, false, domain.Debts{}, now)
	if err != nil || len(es) != 1 || es[0].Kind != domain.EntryPayment {
		t.Fatalf("PaymentEntries = %+v, %v; want one payment entry", es, err)
	}
	e := es[0]
	var avail int64
	for _, p := range e.Postings {
		if p.Account == domain.LedgerAvailable {
			avail += p.Amount
		}
		if p.Account == domain.LedgerPending {
			t.Error("pix net went to pending")
		}
	}
	if avail != 9901 {
		t.Errorf("pix credit %d, want 9901", avail)
	}
	card := settledCharge(t, 10000, domain.MethodCreditCard, "EUR")
	ces, err := domain.PaymentEntries(seqIDs(), card, domain.DefaultHoldingPeriods, false, domain.Debts{}, now)
	if err != nil || len(ces) != 1 {
		t.Fatalf("PaymentEntries = %+v, %v; want one entry", ces, err)
	}
	ce := ces[0]
	found := false
	for _, p := range ce.Postings {
		if p.Account == domain.LedgerPending {
			found = p.Amount == 9313 && p.ReleaseAt.Equal(now.Add(30*24*time.Hour))
		}
	}
	if !found {
		t.Errorf("card credit not pending for 30 days: %+v", ce.Postings)
	}
	r := domain.Refund{ID: "r1", ChargeID: pix.ID(), AccountID: "acct_1", Mode: domain.ModeTest, Amount: 5000, Fee: 50, Currency: "BRL"}
	re, err := domain.RefundEntry("e3", r, 0, domain.Balance{Currency: "BRL", Available: 3000, Pending: 4000}, now)
	if err != nil {
		t.Fatal(err)
	}
	fe, err := domain.RefundFailedEntry("e5", r, domain.RefundDebit{Available: 3000, Pending: 2050}, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range []domain.JournalEntry{e, ce, re, domain.RefundSettledEntry("e4", r, now), fe,
		domain.ReleaseEntry("e6", "acct_1", domain.ModeTest, "c", "BRL", 10, now)} {
		if err := en.Validate(); err != nil {
			t.Errorf("%s: %v", en.Kind, err)
		}
	}
	if re.Postings[0].Amount != -3000 || re.Postings[1].Amount != -2050 {
		t.Errorf("refund did not take available first: %+v", re.Postings)
	}
	if _, err := domain.RefundEntry("e7", r, 0, domain.Balance{Currency: "BRL", Available: 5000}, now); !errors.Is(err, domain.ErrInsufficientBalance) {
		t.Errorf("refund beyond the balance: %v", err)
	}
	bad := domain.JournalEntry{ID: "x", Postings: []domain.Posting{
		{Account: domain.LedgerAvailable, Currency: "BRL", Amount: 10},
		{Account: domain.LedgerAcquirer, Currency: "EUR", Amount: -10},
	}}
	if bad.Validate() == nil {
		t.Error("an entry balancing only across currencies was accepted")
	}
	if (domain.JournalEntry{ID: "y", Postings: []domain.Posting{{Account: domain.LedgerAvailable, Currency: "BRL", Amount: 0}, {Account: domain.LedgerAcquirer, Currency: "BRL"}}}).Validate() == nil {
		t.Error("zero postings accepted")
	}
}

// A failed refund gives back exactly what its debit took: the available
// part to available, each hold taken to pending with its own charge and
// release time (one already past stays past: due at once), and pending
// whose holds were not recorded to pending due at the failure.
func TestRefundFailedEntryPutsBackWhatTheDebitTook(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	late, early := now.Add(29*24*time.Hour), now.Add(-time.Hour)
	r := domain.Refund{ID: "r1", ChargeID: "ch_a", AccountID: "acct_1", Mode: domain.ModeTest, Amount: 9000, Fee: 50, Currency: "BRL"}
	debit, err := domain.RefundEntry("e1", r, 0, domain.Balance{Currency: "BRL", Available: 990, Pending: 13949}, now)
	if err != nil {
		t.Fatal(err)
	}
	type hold struct {
		charge  string
		amount  int64
		release time.Time
	}
	for _, tc := range []struct {
		name  string
		takes []domain.HoldTake
		holds []hold // the pending credits, in order
	}{
		{"two holds of two charges", []domain.HoldTake{{ChargeID: "ch_b", Amount: 4636, ReleaseAt: late}, {ChargeID: "ch_a", Amount: 3424, ReleaseAt: early}},
			[]hold{{"ch_b", 4636, late}, {"ch_a", 3424, early}}},
		{"takes not recorded", nil, []hold{{"", 8060, now}}},
		{"takes recorded in part", []domain.HoldTake{{ChargeID: "ch_b", Amount: 4636, ReleaseAt: late}},
			[]hold{{"ch_b", 4636, late}, {"", 3424, now}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe, err := domain.RefundFailedEntry("e2", r, domain.RefundDebit{Available: 990, Pending: 8060, Takes: tc.takes}, now)
			if err != nil {
				t.Fatal(err)
			}
			if err := fe.Validate(); err != nil {
				t.Fatal(err)
			}
			took, gave := map[domain.LedgerAccount]int64{}, map[domain.LedgerAccount]int64{}
			for _, p := range debit.Postings {
				took[p.Account] -= p.Amount
			}
			var holds []hold
			for _, p := range fe.Postings {
				gave[p.Account] += p.Amount
				if p.Account == domain.LedgerPending {
					holds = append(holds, hold{p.HoldChargeID, p.Amount, p.ReleaseAt})
				}
			}
			for _, a := range []domain.LedgerAccount{domain.LedgerAvailable, domain.LedgerPending, domain.LedgerRefundsPayable, domain.LedgerPixOutFees} {
				if gave[a] != took[a] {
					t.Errorf("%s: the failure gives back %d, the debit took %d", a, gave[a], took[a])
				}
			}
			if took[domain.LedgerAvailable] != 990 || took[domain.LedgerPending] != 8060 {
				t.Fatalf("debit took %v, want 990 available and 8060 pending", took)
			}
			if len(holds) != len(tc.holds) {
				t.Fatalf("pending credits %+v, want %+v", holds, tc.holds)
			}
			for i := range holds {
				if holds[i].charge != tc.holds[i].charge || holds[i].amount != tc.holds[i].amount || !holds[i].release.Equal(tc.holds[i].release) {
					t.Errorf("pending credit %d: %+v, want %+v", i, holds[i], tc.holds[i])
				}
			}
		})
	}
	for name, d := range map[string]domain.RefundDebit{
		"split short of amount + fee": {Available: 990, Pending: 8000},
		"negative part":               {Available: -10, Pending: 9060},
		"takes beyond pending":        {Available: 990, Pending: 8060, Takes: []domain.HoldTake{{ChargeID: "ch_a", Amount: 8061, ReleaseAt: late}}},
		"take without release":        {Available: 990, Pending: 8060, Takes: []domain.HoldTake{{ChargeID: "ch_a", Amount: 100}}},
		"empty take":                  {Available: 990, Pending: 8060, Takes: []domain.HoldTake{{ChargeID: "ch_a", ReleaseAt: late}}},
	} {
		if _, err := domain.RefundFailedEntry("e3", r, d, now); err == nil {
			t.Errorf("%s: accepted %+v", name, d)
		}
	}
}

func TestVerifyLedger(t *testing.T) {
	t.Parallel()
	k := domain.WalletKey{AccountID: "a", Mode: domain.ModeTest, Currency: "BRL"}
	ok := map[domain.WalletKey]domain.Balance{k: {Currency: "BRL", Available: 10, Pending: 5}}
	if p := domain.VerifyLedger(nil, ok, ok, map[domain.WalletKey]int64{k: 5}); len(p) != 0 {
		t.Errorf("consistent ledger reported %v", p)
	}
	drift := map[domain.WalletKey]domain.Balance{k: {Currency: "BRL", Available: 11, Pending: 5}}
	if p := domain.VerifyLedger(nil, ok, drift, map[domain.WalletKey]int64{k: 5}); len(p) != 1 {
		t.Errorf("drift: %v", p)
	}
	if p := domain.VerifyLedger(nil, ok, ok, nil); len(p) != 1 {
		t.Errorf("holds drift: %v", p)
	}
	neg := map[domain.WalletKey]domain.Balance{k: {Currency: "BRL", Available: -1}}
	if p := domain.VerifyLedger([]string{"entry x"}, neg, neg, nil); len(p) != 2 {
		t.Errorf("negative and unbalanced: %v", p)
	}
}
