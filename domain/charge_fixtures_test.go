package domain_test

import (
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

// Fixtures shared by the charge, event and public tests. The documents are
// valid check-digit vectors from testdata/tax-id-vectors.txt.
const (
	chargeRawID   = "abcdefghijklmnopqrstuvwxyz"
	chargeCPF     = "52998224725"
	chargeCPF2    = "11144477735"
	chargeCNPJ    = "12ABC34501DE35"
	chargeAmount  = int64(10_000)
	chargeE2E     = "E00000000202611221200abcdefghijk"
	chargeBRCode  = "00020101021226740014br.gov.bcb.pix"
	chargePixTxID = "quitatxid0123456789abcdefghij"
)

// chargeT0 is the creation time of every fixture charge. Time is always an
// argument: nothing here reads the clock.
var chargeT0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

var chargeLinks = domain.Links{CheckoutBase: "https://pay.quita.test/c"}

var chargePixFees = domain.FeeSchedule{
	Provider: domain.Fee{BPS: 50},
	Platform: domain.Fee{BPS: 49},
}

func chargeParams() domain.NewChargeParams {
	return domain.NewChargeParams{
		ID:        chargeRawID,
		AccountID: "acct_1",
		Mode:      domain.ModeTest,
		Amount:    chargeAmount,
		Currency:  "BRL",
		Methods:   []domain.Method{domain.MethodPix},
		Now:       chargeT0,
	}
}

func chargeNew(t *testing.T, edit func(*domain.NewChargeParams)) *domain.Charge {
	t.Helper()
	p := chargeParams()
	if edit != nil {
		edit(&p)
	}
	c, err := domain.NewCharge(p)
	if err != nil {
		t.Fatalf("NewCharge: %v", err)
	}
	return c
}

// chargeOpen returns a charge awaiting payment (WAITING_PAYMENT), locked to
// expectedPayer when it is not empty.
func chargeOpen(t *testing.T, expectedPayer string) *domain.Charge {
	t.Helper()
	c := chargeNew(t, func(p *domain.NewChargeParams) {
		if expectedPayer != "" {
			p.ExpectedPayer = expectedPayer
			p.Customer.Name = "Maria Silva"
		}
	})
	pix := domain.PixDetails{BRCode: chargeBRCode, TxID: chargePixTxID, ExpiresAt: chargeT0.Add(time.Hour)}
	if err := c.AttachPix(pix, "sandbox", "ref-1", chargeT0); err != nil {
		t.Fatalf("AttachPix: %v", err)
	}
	return c
}

// chargeInStatus loads a charge in any status, the way a storage adapter
// would, to test transitions out of states NewCharge cannot produce.
func chargeInStatus(status domain.TxStatus) *domain.Charge {
	return domain.UnmarshalChargeFromStorage(domain.ChargeSnapshot{
		ID: chargeRawID, AccountID: "acct_1", Mode: domain.ModeTest,
		Amount: chargeAmount, Currency: domain.CurrencyBRL,
		Methods:   []domain.Method{domain.MethodPix},
		Status:    status,
		ExpiresAt: chargeT0.Add(time.Hour), CreatedAt: chargeT0, UpdatedAt: chargeT0,
	})
}

func chargePayment(payer string) domain.PixPayment {
	return domain.PixPayment{
		EndToEndID: chargeE2E, Amount: chargeAmount, PayerTaxID: payer,
		PayerName: "Payer Name", PaidAt: chargeT0.Add(10 * time.Minute),
	}
}

// settledCharge is a charge paid (or, for cards, approved) through
// Transition, the way the payments surface settles it.
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
