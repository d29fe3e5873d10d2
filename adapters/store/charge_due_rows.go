package store

import (
	"encoding/json"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

// dueTermsJSON is a due-date charge's terms in the charges.due_terms
// column: the merchant's rules as validated, which NewDueTerms rebuilds
// into the same terms. Amounts are centavos, rates two-place decimal
// strings, dates YYYY-MM-DD.
type dueTermsJSON struct {
	Original     int64              `json:"original"`
	Created      bizdays.Date       `json:"created"`
	Due          bizdays.Date       `json:"due"`
	DaysAfterDue int                `json:"days_after_due"`
	Fine         *dueValueJSON      `json:"fine,omitempty"`
	Interest     *dueValueJSON      `json:"interest,omitempty"`
	Discount     *dueValueJSON      `json:"discount,omitempty"`
	Abatement    *dueValueJSON      `json:"abatement,omitempty"`
	Until        []dueDiscountUntil `json:"until,omitempty"`
}

// dueValueJSON is one rule: its type and its amount or rate.
type dueValueJSON struct {
	Type         string `json:"type"`
	Amount       int64  `json:"amount,omitempty"`
	Rate         string `json:"rate,omitempty"`
	BusinessDays bool   `json:"business_days,omitempty"`
}

type dueDiscountUntil struct {
	Date   bizdays.Date `json:"date"`
	Amount int64        `json:"amount,omitempty"`
	Rate   string       `json:"rate,omitempty"`
}

// encodeDueTerms is the column's value: nil (NULL) for an immediate charge.
func encodeDueTerms(t *domain.DueTerms) (*string, error) {
	if t == nil {
		return nil, nil
	}
	p := t.Params()
	j := dueTermsJSON{Original: p.Original, Created: p.Created, Due: p.Due, DaysAfterDue: deref(p.DaysAfterDue)}
	if f := p.Fine; f != nil {
		j.Fine = &dueValueJSON{Type: string(f.Type), Amount: f.Amount, Rate: f.Rate}
	}
	if i := p.Interest; i != nil {
		j.Interest = &dueValueJSON{Type: string(i.Type), Amount: i.Amount, Rate: i.Rate, BusinessDays: i.BusinessDays}
	}
	if d := p.Discount; d != nil {
		j.Discount = &dueValueJSON{Type: string(d.Type), Amount: d.Amount, Rate: d.Rate, BusinessDays: d.BusinessDays}
		for _, u := range d.Until {
			j.Until = append(j.Until, dueDiscountUntil(u))
		}
	}
	if a := p.Abatement; a != nil {
		j.Abatement = &dueValueJSON{Type: string(a.Type), Amount: a.Amount, Rate: a.Rate}
	}
	b, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	out := string(b)
	return &out, nil
}

// decodeDueTerms rebuilds the terms through NewDueTerms, which gives back
// the terms that were stored: they were valid when written and depend on
// no clock.
func decodeDueTerms(col *string) (*domain.DueTerms, error) {
	if col == nil || *col == "" {
		return nil, nil
	}
	var j dueTermsJSON
	if err := json.Unmarshal([]byte(*col), &j); err != nil {
		return nil, err
	}
	p := domain.DueTermsParams{Original: j.Original, Created: j.Created, Due: j.Due, DaysAfterDue: &j.DaysAfterDue}
	if f := j.Fine; f != nil {
		p.Fine = &domain.Fine{Type: domain.FineType(f.Type), Amount: f.Amount, Rate: f.Rate}
	}
	if i := j.Interest; i != nil {
		p.Interest = &domain.Interest{Type: domain.InterestType(i.Type), Amount: i.Amount, Rate: i.Rate, BusinessDays: i.BusinessDays}
	}
	if d := j.Discount; d != nil {
		p.Discount = &domain.Discount{Type: domain.DiscountType(d.Type), Amount: d.Amount, Rate: d.Rate, BusinessDays: d.BusinessDays}
		for _, u := range j.Until {
			p.Discount.Until = append(p.Discount.Until, domain.DiscountUntil(u))
		}
	}
	if a := j.Abatement; a != nil {
		p.Abatement = &domain.Abatement{Type: domain.AbatementType(a.Type), Amount: a.Amount, Rate: a.Rate}
	}
	t, err := domain.NewDueTerms(p)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// overdueAt is the charges.overdue_at of a charge: when its charge.overdue
// is to be sent, NULL (zero) when it is not (domain.Charge.OverdueNoticeAt).
func overdueAt(s domain.ChargeSnapshot) dbTime {
	at, ok := domain.UnmarshalChargeFromStorage(s).OverdueNoticeAt()
	if !ok {
		return dbTime{}
	}
	return newDBTime(at)
}
