package httpapi

import (
	"fmt"
	"net/http"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

// The due-date members of a create's body (createChargeRequest) each have
// their own shape, so strict decoding refuses a member a rule does not
// take (a fine with business_days). Amounts are integer centavos, rates
// two-place decimal strings, dates YYYY-MM-DD in Brasília.

type fineJSON struct {
	Type   string `json:"type"`
	Amount int64  `json:"amount"`
	Rate   string `json:"rate"`
}

type interestJSON struct {
	Type         string `json:"type"`
	Amount       int64  `json:"amount"`
	Rate         string `json:"rate"`
	BusinessDays bool   `json:"business_days"`
}

type discountJSON struct {
	Type         string              `json:"type"`
	Until        []discountUntilJSON `json:"until"`
	Amount       int64               `json:"amount"`
	Rate         string              `json:"rate"`
	BusinessDays bool                `json:"business_days"`
}

type discountUntilJSON struct {
	Date   string `json:"date"`
	Amount int64  `json:"amount"`
	Rate   string `json:"rate"`
}

type abatementJSON struct {
	Type   string `json:"type"`
	Amount int64  `json:"amount"`
	Rate   string `json:"rate"`
}

// terms is the request's due-date terms for domain.NewChargeParams.Due:
// nil when it names no due date. A rule or days_after_due without a
// due_date is refused rather than ignored.
func (d createChargeRequest) dueTerms() (*domain.DueTermsParams, error) {
	if d.DueDate == nil {
		for _, m := range []struct {
			sent bool
			name string
		}{{d.DaysAfterDue != nil, "days_after_due"}, {d.Fine != nil, "fine"}, {d.Interest != nil, "interest"},
			{d.Discount != nil, "discount"}, {d.Abatement != nil, "abatement"}} {
			if m.sent {
				return nil, badRequest(m.name, "parameter_invalid", m.name+" applies only to a charge with a due_date")
			}
		}
		return nil, nil
	}
	due, err := bizdays.ParseDate(*d.DueDate)
	if err != nil {
		return nil, badRequest("due_date", "parameter_invalid", "due_date must be a date written YYYY-MM-DD")
	}
	p := &domain.DueTermsParams{Due: due, DaysAfterDue: d.DaysAfterDue, Fine: d.Fine.rule(), Interest: d.Interest.rule(),
		Abatement: d.Abatement.rule()}
	if p.Discount, err = d.Discount.rule(); err != nil {
		return nil, err
	}
	return p, nil
}

// rule is the fine as the domain states it; nil for none.
func (f *fineJSON) rule() *domain.Fine {
	if f == nil {
		return nil
	}
	return &domain.Fine{Type: domain.FineType(f.Type), Amount: f.Amount, Rate: f.Rate}
}

// rule is the interest as the domain states it; nil for none.
func (i *interestJSON) rule() *domain.Interest {
	if i == nil {
		return nil
	}
	return &domain.Interest{Type: domain.InterestType(i.Type), Amount: i.Amount, Rate: i.Rate, BusinessDays: i.BusinessDays}
}

// rule is the discount as the domain states it (nil for none), or a 400
// naming the tier whose date is not YYYY-MM-DD.
func (x *discountJSON) rule() (*domain.Discount, error) {
	if x == nil {
		return nil, nil
	}
	d := &domain.Discount{Type: domain.DiscountType(x.Type), Amount: x.Amount, Rate: x.Rate, BusinessDays: x.BusinessDays}
	for i, u := range x.Until {
		day, err := bizdays.ParseDate(u.Date)
		if err != nil {
			return nil, badRequest(fmt.Sprintf("discount.until[%d].date", i), "parameter_invalid", "each date of discount.until must be written YYYY-MM-DD")
		}
		d.Until = append(d.Until, domain.DiscountUntil{Date: day, Amount: u.Amount, Rate: u.Rate})
	}
	return d, nil
}

// rule is the abatement as the domain states it; nil for none.
func (a *abatementJSON) rule() *domain.Abatement {
	if a == nil {
		return nil
	}
	return &domain.Abatement{Type: domain.AbatementType(a.Type), Amount: a.Amount, Rate: a.Rate}
}

// amountDueResponse is GET /v1/charges/{id}/amount_due: what a payment on
// date must be, and its parts, in centavos.
type amountDueResponse struct {
	Date      string `json:"date"`
	AmountDue int64  `json:"amount_due"`
	Original  int64  `json:"original"`
	Fine      int64  `json:"fine"`
	Interest  int64  `json:"interest"`
	Discount  int64  `json:"discount"`
	Abatement int64  `json:"abatement"`
}

// amountDue serves GET /v1/charges/{id}/amount_due?date=YYYY-MM-DD (date
// defaults to today in Brasília).
func (c *ChargesController) amountDue(_ http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	var on *bizdays.Date
	if s := r.URL.Query().Get("date"); s != "" || r.URL.Query().Has("date") {
		d, err := bizdays.ParseDate(s)
		if err != nil {
			return nil, badRequest("date", "parameter_invalid", "date must be a date written YYYY-MM-DD")
		}
		on = &d
	}
	b, err := c.charges.AmountDue(r.Context(), caller, raw, on)
	if err != nil {
		return nil, err
	}
	return amountDueResponse{Date: b.Date.String(), AmountDue: b.AmountDue, Original: b.Original,
		Fine: b.Fine, Interest: b.Interest, Discount: b.Discount, Abatement: b.Abatement}, nil
}
