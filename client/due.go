package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
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

// ChargeUpdateParams revise a pending due-date charge's terms
// (Charges.Update). Fields left zero keep the charge's; Remove names the
// rules to remove ("fine", "interest", "discount", "abatement"). The rules
// are validated as at create, against the charge's amount and day of
// creation.
type ChargeUpdateParams struct {
	// DueDate (YYYY-MM-DD, Brasília) moves the due date; a new one must
	// not be before today.
	DueDate      string        `json:"due_date,omitempty"`
	DaysAfterDue *int          `json:"days_after_due,omitempty"`
	Fine         *DueFine      `json:"fine,omitempty"`
	Interest     *DueInterest  `json:"interest,omitempty"`
	Discount     *DueDiscount  `json:"discount,omitempty"`
	Abatement    *DueAbatement `json:"abatement,omitempty"`
	Remove       []string      `json:"-"`
	// IdempotencyKey (8–128 characters), when set, makes the revision
	// safe to retry: the same key and body answer the first result.
	IdempotencyKey string `json:"-"`
}

// dueRules are the rules ChargeUpdateParams.Remove may name.
var dueRules = []string{"fine", "interest", "discount", "abatement"}

// MarshalJSON writes the set fields, and null for each removed rule.
func (p ChargeUpdateParams) MarshalJSON() ([]byte, error) {
	type plain ChargeUpdateParams
	b, err := json.Marshal(plain(p))
	if err != nil || len(p.Remove) == 0 {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for _, r := range p.Remove {
		if !slices.Contains(dueRules, r) {
			return nil, fmt.Errorf("client: Remove names %q; the rules are %v", r, dueRules)
		}
		if _, set := m[r]; set {
			return nil, fmt.Errorf("client: %s is both set and removed", r)
		}
		m[r] = json.RawMessage("null")
	}
	return json.Marshal(m)
}

// Update revises the terms of due-date charge id (POST /v1/charges/{id})
// and returns the charge with them; its Pix.ExpiresAt moves with the last
// payable day. A charge without a due date is an error with code
// charge_not_due_date; one no longer awaiting payment, charge_not_pending.
func (s *ChargesService) Update(ctx context.Context, id string, p ChargeUpdateParams) (*Charge, error) {
	body, err := p.MarshalJSON()
	if err != nil {
		return nil, err
	}
	r := keyedWrite(request{method: http.MethodPost, path: "/charges/" + pathID(id), body: json.RawMessage(body)}, p.IdempotencyKey)
	var out Charge
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
