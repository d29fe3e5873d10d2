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
	e, err := domain.PaymentEntry("e1", pix, domain.DefaultHoldingPeriods, false, 0, now)
	if err != nil {
		t.Fatal(err)
	}
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
	ce, err := domain.PaymentEntry("e2", card, domain.DefaultHoldingPeriods, false, 0, now)
	if err != nil {
		t.Fatal(err)
	}
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
	re, err := domain.RefundEntry("e3", r, domain.Balance{Currency: "BRL", Available: 3000, Pending: 4000}, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range []domain.JournalEntry{e, ce, re, domain.RefundSettledEntry("e4", r, now), domain.RefundFailedEntry("e5", r, now),
		domain.ReleaseEntry("e6", "acct_1", domain.ModeTest, "c", "BRL", 10, now)} {
		if err := en.Validate(); err != nil {
			t.Errorf("%s: %v", en.Kind, err)
		}
	}
	if re.Postings[0].Amount != -3000 || re.Postings[1].Amount != -2050 {
		t.Errorf("refund did not take available first: %+v", re.Postings)
	}
	if _, err := domain.RefundEntry("e7", r, domain.Balance{Currency: "BRL", Available: 5000}, now); !errors.Is(err, domain.ErrInsufficientBalance) {
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
