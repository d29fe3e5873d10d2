package domain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

func dayPtr(d bizdays.Date) *bizdays.Date { return &d }

func intPtr(n int) *int { return &n }

// brasiliaNoon is noon of day d in Brasília (15:00 UTC).
func brasiliaNoon(y int, m time.Month, d int) time.Time {
	return time.Date(y, m, d, 15, 0, 0, 0, time.UTC)
}

// The fixture (dueCharge) is created Sunday 22 Nov 2026, due Monday 30
// Nov, payable until Monday 7 Dec, R$ 100.00 with a R$ 2.00 fine, R$ 0.10 a
// day of interest and R$ 1.00 off until 25 Nov. Each revision is applied
// and the charge is asked what a payment on one day must be.
func TestReviseDueTermsApplies(t *testing.T) {
	t.Parallel()
	created := bizdays.MustDate(2026, time.November, 22)
	for _, tc := range []struct {
		name    string
		rev     domain.DueRevision
		now     time.Time
		changed bool
		due     bizdays.Date // want, as given
		last    bizdays.Date // want
		day     bizdays.Date // AmountDue on this day
		amount  int64        // is this
	}{
		{"nothing", domain.DueRevision{}, chargeT0, false,
			bizdays.MustDate(2026, 11, 30), bizdays.MustDate(2026, 12, 7), bizdays.MustDate(2026, 12, 2), 10_220},
		{"the same terms again", domain.DueRevision{Due: dayPtr(bizdays.MustDate(2026, 11, 30)), DaysAfterDue: intPtr(5),
			Fine: domain.ReplaceRule(domain.Fine{Type: domain.FineFixed, Amount: 200})}, chargeT0, false,
			bizdays.MustDate(2026, 11, 30), bizdays.MustDate(2026, 12, 7), bizdays.MustDate(2026, 12, 2), 10_220},
		// Friday 4 Dec + 5 = Wednesday 9 Dec; on Tuesday 8 Dec it is 4
		// days late: 10000 + 200 + 4 × 10.
		{"due date moved later", domain.DueRevision{Due: dayPtr(bizdays.MustDate(2026, 12, 4))}, chargeT0, true,
			bizdays.MustDate(2026, 12, 4), bizdays.MustDate(2026, 12, 9), bizdays.MustDate(2026, 12, 8), 10_240},
		// Paid on the old due date's next day, now before the new one.
		{"due date moved later, no fine yet", domain.DueRevision{Due: dayPtr(bizdays.MustDate(2026, 12, 4))}, chargeT0, true,
			bizdays.MustDate(2026, 12, 4), bizdays.MustDate(2026, 12, 9), bizdays.MustDate(2026, 12, 1), 10_000},
		{"no days after the due date", domain.DueRevision{DaysAfterDue: intPtr(0)}, chargeT0, true,
			bizdays.MustDate(2026, 11, 30), bizdays.MustDate(2026, 11, 30), bizdays.MustDate(2026, 11, 30), 10_000},
		{"fine replaced by 5 %", domain.DueRevision{Fine: domain.ReplaceRule(domain.Fine{Type: domain.FinePercent, Rate: "5.00"})}, chargeT0, true,
			bizdays.MustDate(2026, 11, 30), bizdays.MustDate(2026, 12, 7), bizdays.MustDate(2026, 12, 2), 10_520},
		{"interest removed", domain.DueRevision{Interest: domain.RemoveRule[domain.Interest]()}, chargeT0, true,
			bizdays.MustDate(2026, 11, 30), bizdays.MustDate(2026, 12, 7), bizdays.MustDate(2026, 12, 2), 10_200},
		{"discount removed", domain.DueRevision{Discount: domain.RemoveRule[domain.Discount]()}, chargeT0, true,
			bizdays.MustDate(2026, 11, 30), bizdays.MustDate(2026, 12, 7), bizdays.MustDate(2026, 11, 24), 10_000},
		// 10000 − 500 − 100 off until 25 Nov.
		{"abatement added", domain.DueRevision{Abatement: domain.ReplaceRule(domain.Abatement{Type: domain.AbatementFixed, Amount: 500})}, chargeT0, true,
			bizdays.MustDate(2026, 11, 30), bizdays.MustDate(2026, 12, 7), bizdays.MustDate(2026, 11, 24), 9_400},
		// Revised on 1 Dec (overdue): a tier dated before that day is
		// valid, since the rules are checked against the day of creation.
		{"while overdue, a tier before today", domain.DueRevision{Discount: domain.ReplaceRule(domain.Discount{Type: domain.DiscountFixedUntil,
			Until: []domain.DiscountUntil{{Date: bizdays.MustDate(2026, 11, 23), Amount: 50}}})}, brasiliaNoon(2026, 12, 1), true,
			bizdays.MustDate(2026, 11, 30), bizdays.MustDate(2026, 12, 7), bizdays.MustDate(2026, 12, 1), 10_210},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := dueCharge(t)
			changed, err := c.ReviseDueTerms(tc.rev, tc.now)
			if err != nil || changed != tc.changed {
				t.Fatalf("ReviseDueTerms = %v, %v; want changed %v", changed, err, tc.changed)
			}
			terms, _ := c.DueTerms()
			p := terms.Params()
			if p.Due != tc.due || terms.LastPayableDay() != tc.last || p.Created != created || p.Original != chargeAmount {
				t.Errorf("terms due %v last %v created %v original %d; want due %v last %v, created %v, original %d",
					p.Due, terms.LastPayableDay(), p.Created, p.Original, tc.due, tc.last, created, chargeAmount)
			}
			end := domain.EndOfBrasiliaDay(tc.last)
			if !c.ExpiresAt().Equal(end) || !c.Pix().ExpiresAt.Equal(end) {
				t.Errorf("expires at %v (pix %v), want the end of %v in Brasília, %v", c.ExpiresAt(), c.Pix().ExpiresAt, tc.last, end)
			}
			b, err := c.AmountDue(tc.day)
			if err != nil || b.AmountDue != tc.amount {
				t.Errorf("AmountDue(%v) = %+v, %v; want %d", tc.day, b, err, tc.amount)
			}
		})
	}
}

// Refusals: the charge's state first (an immediate charge, one that no
// longer awaits payment or whose time is up), then the revised terms,
// each naming its field. A refused revision changes nothing.
func TestReviseDueTermsRefuses(t *testing.T) {
	t.Parallel()
	paid := func(c *domain.Charge) {
		pay := chargePayment("")
		pay.PaidAt = brasiliaNoon(2026, 11, 30)
		if out, err := c.SettlePix(pay, chargePixFees); err != nil || out != domain.OutcomePaid {
			t.Fatalf("SettlePix: %v %v", out, err)
		}
	}
	for _, tc := range []struct {
		name  string
		edit  func(*domain.Charge)
		rev   domain.DueRevision
		now   time.Time
		err   error
		field domain.Field
	}{
		{"paid", paid, domain.DueRevision{DaysAfterDue: intPtr(10)}, chargeT0, domain.ErrChargeNotRevisable, ""},
		{"cancelled", func(c *domain.Charge) { _ = c.Cancel(chargeT0) }, domain.DueRevision{DaysAfterDue: intPtr(10)}, chargeT0, domain.ErrChargeNotRevisable, ""},
		{"expired", func(c *domain.Charge) { _ = c.Expire(chargeT0) }, domain.DueRevision{DaysAfterDue: intPtr(10)}, chargeT0, domain.ErrChargeNotRevisable, ""},
		{"past its last payable day", nil, domain.DueRevision{DaysAfterDue: intPtr(10)},
			time.Date(2026, 12, 8, 3, 0, 0, 0, time.UTC), domain.ErrChargeNotRevisable, ""},
		{"state before terms", paid, domain.DueRevision{DaysAfterDue: intPtr(-1)}, chargeT0, domain.ErrChargeNotRevisable, ""},
		{"due date before the day of creation", nil, domain.DueRevision{Due: dayPtr(bizdays.MustDate(2026, 11, 21))}, chargeT0, nil, domain.FieldDueDate},
		{"due date moved before today", nil, domain.DueRevision{Due: dayPtr(bizdays.MustDate(2026, 11, 27))},
			brasiliaNoon(2026, 11, 28), nil, domain.FieldDueDate},
		{"due date more than ten years out", nil, domain.DueRevision{Due: dayPtr(bizdays.MustDate(2037, 1, 1))}, chargeT0, nil, domain.FieldDueDate},
		{"negative days after due", nil, domain.DueRevision{DaysAfterDue: intPtr(-1)}, chargeT0, nil, domain.FieldDaysAfterDue},
		{"last payable day already past", nil, domain.DueRevision{DaysAfterDue: intPtr(0)}, brasiliaNoon(2026, 12, 2), nil, domain.FieldDaysAfterDue},
		{"fine rate with no decimals", nil, domain.DueRevision{Fine: domain.ReplaceRule(domain.Fine{Type: domain.FinePercent, Rate: "2"})}, chargeT0, nil, domain.FieldFine},
		{"interest of an unknown type", nil, domain.DueRevision{Interest: domain.ReplaceRule(domain.Interest{Type: "compound", Rate: "1.00"})}, chargeT0, nil, domain.FieldInterest},
		{"discount tier after a due date moved earlier", nil, domain.DueRevision{Due: dayPtr(bizdays.MustDate(2026, 11, 24))}, chargeT0, nil, domain.FieldDiscountUntil},
		{"abatement of the whole amount", nil, domain.DueRevision{Abatement: domain.ReplaceRule(domain.Abatement{Type: domain.AbatementFixed, Amount: chargeAmount})}, chargeT0, nil, domain.FieldAbatement},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := dueCharge(t)
			if tc.edit != nil {
				tc.edit(c)
			}
			before := c.Snapshot()
			changed, err := c.ReviseDueTerms(tc.rev, tc.now)
			var ve *domain.ValidationError
			switch {
			case tc.err != nil && !errors.Is(err, tc.err):
				t.Fatalf("ReviseDueTerms: %v, want %v", err, tc.err)
			case tc.err == nil && (!errors.As(err, &ve) || ve.Field != tc.field):
				t.Fatalf("ReviseDueTerms: %v, want a validation error of %q", err, tc.field)
			case changed:
				t.Fatal("a refused revision reports a change")
			}
			after := c.Snapshot()
			if !after.Due.Equal(*before.Due) || !after.ExpiresAt.Equal(before.ExpiresAt) || !after.UpdatedAt.Equal(before.UpdatedAt) {
				t.Errorf("a refused revision changed the charge: terms %+v expires %v", after.Due.Params(), after.ExpiresAt)
			}
		})
	}
	if _, err := chargeNew(t, nil).ReviseDueTerms(domain.DueRevision{DaysAfterDue: intPtr(3)}, chargeT0); !errors.Is(err, domain.ErrNotDueDateCharge) {
		t.Errorf("an immediate charge: %v, want ErrNotDueDateCharge", err)
	}
}

// After a revision a payment settles for the revised amount due on its
// day, and the old amount is a wrong amount.
func TestRevisedChargeSettlesForTheRevisedAmount(t *testing.T) {
	t.Parallel()
	c := dueCharge(t)
	rev := domain.DueRevision{Fine: domain.ReplaceRule(domain.Fine{Type: domain.FinePercent, Rate: "5.00"})}
	if _, err := c.ReviseDueTerms(rev, chargeT0); err != nil {
		t.Fatal(err)
	}
	pay := chargePayment("")
	pay.PaidAt, pay.Amount = brasiliaNoon(2026, 12, 2), 10_220 // the amount due before the revision
	if out, err := c.SettlePix(pay, chargePixFees); err != nil || out != domain.OutcomeUnderpaid {
		t.Fatalf("the old amount: %v %v, want a wrong amount", out, err)
	}
	pay.EndToEndID, pay.Amount = "E00000000202612021500revisedpay01", 10_520
	if out, err := c.SettlePix(pay, chargePixFees); err != nil || out != domain.OutcomePaid || c.PaidAmount() != 10_520 {
		t.Fatalf("the revised amount: %v %v, paid %d", out, err, c.PaidAmount())
	}
}
