package domain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

// dueParams are due-date terms for the fixture charge (created Sunday 22
// Nov 2026, 09:00 in Brasília): due Monday 30 Nov, payable five days more
// (Saturday 5 Dec, moved to Monday 7 Dec), a fixed fine of R$ 2.00 and
// R$ 0.10 a day of interest, R$ 1.00 off when paid by 25 Nov.
func dueParams() *domain.DueTermsParams {
	five := 5
	return &domain.DueTermsParams{
		Due:          bizdays.MustDate(2026, time.November, 30),
		DaysAfterDue: &five,
		Fine:         &domain.Fine{Type: domain.FineFixed, Amount: 200},
		Interest:     &domain.Interest{Type: domain.InterestAmountPerDay, Amount: 10},
		Discount: &domain.Discount{Type: domain.DiscountFixedUntil,
			Until: []domain.DiscountUntil{{Date: bizdays.MustDate(2026, time.November, 25), Amount: 100}}},
	}
}

func dueCharge(t *testing.T) *domain.Charge {
	t.Helper()
	c := chargeNew(t, func(p *domain.NewChargeParams) {
		p.Due = dueParams()
		p.Customer = domain.Customer{Name: "Maria Silva", Document: chargeCPF}
	})
	pix := domain.PixDetails{BRCode: chargeBRCode, TxID: chargePixTxID, ExpiresAt: c.ExpiresAt()}
	if err := c.AttachPix(pix, "sandbox", "ref-1", chargeT0); err != nil {
		t.Fatalf("AttachPix: %v", err)
	}
	return c
}

// TestDueDateChargeExpiresAfterItsLastPayableDay: the terms take the
// charge's amount and its day of creation in Brasília, and the charge
// expires at the end of the last payable day in Brasília (midnight there,
// 03:00 UTC), not after an expires_in.
func TestDueDateChargeExpiresAfterItsLastPayableDay(t *testing.T) {
	t.Parallel()
	c := dueCharge(t)
	terms, ok := c.DueTerms()
	if !ok {
		t.Fatal("a charge made with Due has no due terms")
	}
	p := terms.Params()
	if p.Original != chargeAmount || p.Created != bizdays.MustDate(2026, time.November, 22) {
		t.Errorf("terms have original %d created %v, want %d on 2026-11-22", p.Original, p.Created, chargeAmount)
	}
	if want := time.Date(2026, 12, 8, 3, 0, 0, 0, time.UTC); !c.ExpiresAt().Equal(want) {
		t.Errorf("expires at %v, want %v (end of Monday 7 Dec in Brasília)", c.ExpiresAt(), want)
	}
	if _, ok := chargeNew(t, nil).DueTerms(); ok {
		t.Error("an immediate charge has due terms")
	}
	if _, err := chargeNew(t, nil).AmountDue(bizdays.MustDate(2026, time.November, 22)); !errors.Is(err, domain.ErrNotDueDateCharge) {
		t.Errorf("AmountDue of an immediate charge: %v, want ErrNotDueDateCharge", err)
	}
}

// TestDueDateChargeIsCreatedOnBrasiliasDay: at 01:00 UTC it is still the
// previous day in Brasília, so a due date on that day is not in the past.
func TestDueDateChargeIsCreatedOnBrasiliasDay(t *testing.T) {
	t.Parallel()
	c := chargeNew(t, func(p *domain.NewChargeParams) {
		p.Now = time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)
		p.Due = &domain.DueTermsParams{Due: bizdays.MustDate(2026, time.November, 23)}
		p.Customer = domain.Customer{Name: "Maria Silva", Document: chargeCNPJ}
	})
	terms, _ := c.DueTerms()
	if got := terms.Params().Created; got != bizdays.MustDate(2026, time.November, 23) {
		t.Errorf("created on %v, want 2026-11-23", got)
	}
}

func TestDueDateChargeRefusals(t *testing.T) {
	t.Parallel()
	tooLong := int64(600)
	for _, tc := range []struct {
		name  string
		edit  func(*domain.NewChargeParams)
		field domain.Field
	}{
		{"with expires_in", func(p *domain.NewChargeParams) { p.ExpiresIn = &tooLong }, domain.FieldExpiresIn},
		{"no customer name", func(p *domain.NewChargeParams) { p.Customer.Name = " " }, domain.FieldCustomerName},
		{"no customer document", func(p *domain.NewChargeParams) { p.Customer.Document = "" }, domain.FieldCustomerDocument},
		{"bad customer document", func(p *domain.NewChargeParams) { p.Customer.Document = "12345678900" }, domain.FieldCustomerDocument},
		{"not only pix", func(p *domain.NewChargeParams) { p.Methods = []domain.Method{domain.MethodPix, domain.MethodBoleto} }, domain.FieldPaymentMethod},
		{"due before creation", func(p *domain.NewChargeParams) { p.Due.Due = bizdays.MustDate(2026, time.November, 21) }, domain.FieldDueDate},
		{"bad fine rate", func(p *domain.NewChargeParams) { p.Due.Fine = &domain.Fine{Type: domain.FinePercent, Rate: "2"} }, domain.FieldFine},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := chargeParams()
			p.Due = dueParams()
			p.Customer = domain.Customer{Name: "Maria Silva", Document: chargeCPF}
			tc.edit(&p)
			_, err := domain.NewCharge(p)
			var ve *domain.ValidationError
			if !errors.As(err, &ve) || ve.Field != tc.field {
				t.Fatalf("NewCharge: %v, want a validation error of %q", err, tc.field)
			}
		})
	}
}

// TestDueDateChargeSettlesForTheAmountDueThatDay: the payment must equal
// the amount due on its day in Brasília; the original amount paid late, or
// the late amount paid early, is a wrong amount.
func TestDueDateChargeSettlesForTheAmountDueThatDay(t *testing.T) {
	t.Parallel()
	late := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)  // two days late: 10000 + 200 + 2 × 10
	early := time.Date(2026, 11, 25, 2, 0, 0, 0, time.UTC) // 24 Nov in Brasília: 10000 − 100
	for _, tc := range []struct {
		name   string
		amount int64
		at     time.Time
		want   domain.SettlementOutcome
	}{
		{"late with fine and interest", 10_220, late, domain.OutcomePaid},
		{"late for the original amount", chargeAmount, late, domain.OutcomeUnderpaid},
		{"early with the discount", 9_900, early, domain.OutcomePaid},
		{"early without the discount", chargeAmount, early, domain.OutcomeUnderpaid},
		{"on the due date", chargeAmount, time.Date(2026, 11, 30, 20, 0, 0, 0, time.UTC), domain.OutcomePaid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := dueCharge(t)
			pay := chargePayment("")
			pay.Amount, pay.PaidAt = tc.amount, tc.at
			got, err := c.SettlePix(pay, chargePixFees)
			if err != nil || got != tc.want {
				t.Fatalf("SettlePix(%d at %v) = %q, %v; want %q", tc.amount, tc.at, got, err, tc.want)
			}
			if got != domain.OutcomePaid {
				return
			}
			if c.Settlement().Amount != tc.amount || c.PaidAmount() != tc.amount || c.RefundableAmount() != tc.amount {
				t.Errorf("settled for %d, paid %d, refundable %d; want %d each", c.Settlement().Amount, c.PaidAmount(), c.RefundableAmount(), tc.amount)
			}
			if p := c.Public(chargeLinks).Paid; p == nil || p.Amount != tc.amount || p.Original != chargeAmount {
				t.Errorf("public paid block %+v, want the amount %d of %d", p, tc.amount, chargeAmount)
			}
			es, err := domain.PaymentEntries(seqIDs(), c, nil, false, domain.Debts{}, tc.at)
			if err != nil {
				t.Fatal(err)
			}
			if got := postedTo(es, domain.LedgerAcquirer); got != -tc.amount {
				t.Errorf("PaymentEntries took %d from the acquirer, want %d", -got, tc.amount)
			}
		})
	}
	c := dueCharge(t)
	pay := chargePayment("")
	pay.PaidAt = time.Date(2026, 12, 8, 3, 0, 0, 0, time.UTC)
	if _, err := c.SettlePix(pay, chargePixFees); !errors.Is(err, domain.ErrChargeExpired) {
		t.Errorf("a payment after the last payable day: %v, want ErrChargeExpired", err)
	}
}
