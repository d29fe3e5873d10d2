package client

import (
	"context"
	"net/http"
	"net/url"
)

// DueFine is a due-date charge's fine, charged once on a payment after the
// due date: Type "fixed" takes Amount (centavos), "percent" takes Rate (a
// two-decimal percentage string, "2.00") of the amount after the
// abatement.
type DueFine struct {
	Type   string `json:"type"`
	Amount int64  `json:"amount,omitempty"`
	Rate   string `json:"rate,omitempty"`
}

// DueInterest is simple interest for each day late: Type
// "amount_per_day" takes Amount; "percent_per_day", "percent_per_month"
// and "percent_per_year" take Rate. BusinessDays counts business days only.
type DueInterest struct {
	Type         string `json:"type"`
	Amount       int64  `json:"amount,omitempty"`
	Rate         string `json:"rate,omitempty"`
	BusinessDays bool   `json:"business_days,omitempty"`
}

// DueDiscount is for paying on or before the due date: "fixed_until" and
// "percent_until" take Until (one to three tiers); "amount_per_day_before"
// and "percent_per_day_before" take Amount or Rate per day early.
type DueDiscount struct {
	Type         string            `json:"type"`
	Until        []DueDiscountTier `json:"until,omitempty"`
	Amount       int64             `json:"amount,omitempty"`
	Rate         string            `json:"rate,omitempty"`
	BusinessDays bool              `json:"business_days,omitempty"`
}

// DueDiscountTier is one dated tier: the discount while paying on or
// before Date (YYYY-MM-DD).
type DueDiscountTier struct {
	Date   string `json:"date"`
	Amount int64  `json:"amount,omitempty"`
	Rate   string `json:"rate,omitempty"`
}

// DueAbatement is taken off on every day: "fixed" takes Amount, "percent"
// takes Rate of the original amount.
type DueAbatement struct {
	Type   string `json:"type"`
	Amount int64  `json:"amount,omitempty"`
	Rate   string `json:"rate,omitempty"`
}

// DuePaid is a credited due-date charge's payment and its parts, in
// centavos: Amount = Original − Abatement − Discount + Fine + Interest on
// Date.
type DuePaid struct {
	Date      string `json:"date"`
	Amount    int64  `json:"amount"`
	Original  int64  `json:"original"`
	Fine      int64  `json:"fine"`
	Interest  int64  `json:"interest"`
	Discount  int64  `json:"discount"`
	Abatement int64  `json:"abatement"`
}

// AmountDue is what a due-date charge asks on Date, in centavos.
type AmountDue struct {
	Date      string `json:"date"`
	AmountDue int64  `json:"amount_due"`
	Original  int64  `json:"original"`
	Fine      int64  `json:"fine"`
	Interest  int64  `json:"interest"`
	Discount  int64  `json:"discount"`
	Abatement int64  `json:"abatement"`
}

// AmountDue is what due-date charge id asks on date (YYYY-MM-DD; "" is
// today in Brasília): GET /v1/charges/{id}/amount_due. After the last
// payable day the error's code is charge_overdue_closed; for an immediate
// charge, charge_not_due_date.
func (s *ChargesService) AmountDue(ctx context.Context, id, date string) (*AmountDue, error) {
	r := request{method: http.MethodGet, path: "/charges/" + pathID(id) + "/amount_due"}
	if date != "" {
		r.query = url.Values{"date": {date}}
	}
	var out AmountDue
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
