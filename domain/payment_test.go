package domain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

func TestFeeRoundingHalfUp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fee    domain.Fee
		amount int64
		want   int64
	}{
		{domain.Fee{BPS: 50}, 10000, 50},
		{domain.Fee{BPS: 50}, 100, 1}, // 0.5 rounds up
		{domain.Fee{BPS: 50}, 99, 0},  // 0.495 rounds down
		{domain.Fee{BPS: 49}, 102, 0}, // 0.4998 rounds down
		{domain.Fee{BPS: 49}, 103, 1}, // 0.5047 rounds up
		{domain.Fee{BPS: 349, Fixed: 39}, 10000, 388},
		{domain.Fee{BPS: 299}, 1, 0},
		{domain.Fee{BPS: 299}, 0, 0},
		{domain.Fee{BPS: 10_000}, 12345, 12345},
	}
	for _, tt := range tests {
		if got := tt.fee.Of(tt.amount); got != tt.want {
			t.Errorf("%+v of %d = %d, want %d", tt.fee, tt.amount, got, tt.want)
		}
	}
	s := domain.FeeSchedule{Provider: domain.Fee{BPS: 299}, Platform: domain.Fee{BPS: 349, Fixed: 39}}
	f := s.Apply(50)
	if f.Net(50) < 0 || f.Provider+f.Platform > 50 {
		t.Errorf("fees %+v exceed a tiny amount", f)
	}
	if f := s.Apply(10000); f.Net(10000) != 9313 {
		t.Errorf("card net of 10000 = %d, want 9313", f.Net(10000))
	}
}

func digits(s string) string { return strings.NewReplacer(".", "", " ", "").Replace(s) }

func TestBoletoCheckDigits(t *testing.T) {
	t.Parallel()
	// Published examples (Bradesco, Banco do Brasil).
	valid := []string{
		"23793.38128 60007.827136 95000.063305 9 75520000370000",
		"00190.50095 40144.816069 06809.350314 3 37370000000100",
	}
	for _, l := range valid {
		d := digits(l)
		if !domain.ValidBoletoLine(d) {
			t.Errorf("%s: valid line rejected", l)
		}
		if !domain.ValidBoletoBarcode(domain.BoletoLineToBarcode(d)) {
			t.Errorf("%s: barcode rejected", l)
		}
		for i := range d {
			bad := []byte(d)
			bad[i] = '0' + (bad[i]-'0'+1)%10
			if domain.ValidBoletoLine(string(bad)) {
				t.Errorf("%s: change at %d not detected", l, i)
			}
		}
	}
	// NewBoleto rebuilds the Bradesco example from its parts.
	due := time.Date(1997, 10, 7, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 7552)
	b, err := domain.NewBoleto("237", 370000, due, "3381260007827139500006330")
	if err != nil {
		t.Fatal(err)
	}
	if b.Line != digits(valid[0]) || b.Barcode != "23799755200003700003381260007827139500006330" {
		t.Errorf("NewBoleto = %+v", b)
	}
	// The due factor wrapped to 1000 on 2025-02-22.
	if f := domain.BoletoDueFactor(time.Date(2025, 2, 22, 15, 0, 0, 0, time.UTC)); f != 1000 {
		t.Errorf("factor on 2025-02-22 = %d, want 1000", f)
	}
	if f := domain.BoletoDueFactor(time.Date(2025, 2, 21, 0, 0, 0, 0, time.UTC)); f != 9999 {
		t.Errorf("factor on 2025-02-21 = %d, want 9999", f)
	}
	if _, err := domain.NewBoleto("23", 1, due, "1"); err == nil {
		t.Error("NewBoleto accepted a bad bank and free field")
	}
	if domain.Mod10("0019050095") != 9 || domain.BoletoBarcodeDV("0019373700000001000500940144816060680935031") != 3 {
		t.Error("check digit functions disagree with the published example")
	}
}

func TestMultibancoReference(t *testing.T) {
	t.Parallel()
	ref, err := domain.MultibancoReference("21999", "1234567", 2500)
	if err != nil || len(ref) != 9 || !strings.HasPrefix(ref, "1234567") {
		t.Fatalf("ref %q %v", ref, err)
	}
	if !domain.ValidMultibancoReference("21999", ref, 2500) || domain.ValidMultibancoReference("21999", ref, 2501) {
		t.Error("check digits do not bind the amount")
	}
}

func settledCharge(t *testing.T, amount int64, method domain.Method, cur string) *domain.Charge {
	t.Helper()
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	c, err := domain.NewCharge(domain.NewChargeParams{ID: strings.Repeat("a", 26), AccountID: "acct_1", Mode: domain.ModeTest,
		Amount: amount, Currency: cur, Methods: []domain.Method{method}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AttachMethods(domain.MethodDetails{}, "sandbox", "", now); err != nil {
		t.Fatal(err)
	}
	status := domain.TxPaid
	if method.CardMethod() {
		status = domain.TxApproved
	}
	fees := map[domain.Method]domain.FeeSchedule{
		domain.MethodPix:        {Provider: domain.Fee{BPS: 50}, Platform: domain.Fee{BPS: 49}},
		domain.MethodCreditCard: {Provider: domain.Fee{BPS: 299}, Platform: domain.Fee{BPS: 349, Fixed: 39}},
	}
	if err := c.Transition(status, method, fees, "E99999999202611011200abcdefghijk", now); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLedgerEntriesBalance(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	pix := settledCharge(t, 10000, domain.MethodPix, "BRL")
	e, err := domain.PaymentEntry("e1", pix, domain.DefaultHoldingPeriods, now)
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
	ce, err := domain.PaymentEntry("e2", card, domain.DefaultHoldingPeriods, now)
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

func TestRefundReservation(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	c := settledCharge(t, 1000, domain.MethodPix, "BRL")
	if err := c.ReserveRefund(600, now); err != nil {
		t.Fatal(err)
	}
	if err := c.ReserveRefund(401, now); !errors.Is(err, domain.ErrRefundExceedsAmount) {
		t.Errorf("over-refund: %v", err)
	}
	if err := c.ReserveRefund(400, now); err != nil {
		t.Fatal(err)
	}
	if err := c.ReleaseRefund(400, now); err != nil || c.RefundableAmount() != 400 {
		t.Errorf("release: %v, refundable %d", err, c.RefundableAmount())
	}
	if err := c.CompleteRefund(600, now); err != nil || c.Status() != domain.TxPaid {
		t.Errorf("partial completion: %v %s", err, c.Status())
	}
	if err := c.ReserveRefund(400, now); err != nil {
		t.Fatal(err)
	}
	if err := c.CompleteRefund(400, now); err != nil || c.Status() != domain.TxRefunded {
		t.Errorf("full completion: %v %s", err, c.Status())
	}
	boleto := settledCharge(t, 1000, domain.MethodBoleto, "BRL")
	if err := boleto.ReserveRefund(1, now); !errors.Is(err, domain.ErrRefundNotSupported) {
		t.Errorf("boleto refund: %v", err)
	}
	r := domain.Refund{Status: domain.RefundPending}
	if r.Advance(domain.RefundRefunded, now) == nil {
		t.Error("PENDING → REFUNDED skipped IN_PROGRESS")
	}
	if r.Advance(domain.RefundInProgress, now) != nil || r.Advance(domain.RefundRefunded, now) != nil ||
		!errors.Is(r.Advance(domain.RefundFailed, now), domain.ErrRefundNotOpen) {
		t.Errorf("refund steps: %+v", r)
	}
}

func TestTransitionRules(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	c, err := domain.NewCharge(domain.NewChargeParams{ID: strings.Repeat("b", 26), AccountID: "a", Mode: domain.ModeTest,
		Amount: 100, Currency: "EUR", Methods: []domain.Method{domain.MethodMultibanco}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	_ = c.AttachMethods(domain.MethodDetails{}, "sandbox", "", now)
	if err := c.Transition(domain.TxApproved, "", nil, "", now); err == nil {
		t.Error("multibanco approved as a card")
	}
	if err := c.Transition(domain.TxRefunded, "", nil, "", now); err == nil {
		t.Error("REFUNDED reached without a refund")
	}
	if err := c.Transition(domain.TxPaid, domain.MethodPix, nil, "", now); err == nil {
		t.Error("paid with a method the charge does not offer")
	}
	if err := c.Transition(domain.TxPaid, "", nil, "", now); err != nil || c.Settlement().PaidWith != domain.MethodMultibanco {
		t.Errorf("paid: %v", err)
	}
	if _, err := domain.NewCharge(domain.NewChargeParams{ID: strings.Repeat("c", 26), AccountID: "a", Mode: domain.ModeTest,
		Amount: 100, Currency: "EUR", Methods: []domain.Method{domain.MethodMBWay}, Metadata: map[string]any{"phone": "912345678"}, Now: now}); err == nil {
		t.Error("MBWAY accepted a phone that is not E.164")
	}
}
