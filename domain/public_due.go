package domain

// PublicDueRule is one rule of a due-date charge as the charges surface
// shows it: the type and the amount (centavos) or rate (two-place decimal
// string) the merchant gave, in the shape the create request takes.
type PublicDueRule struct {
	Type         string              `json:"type"`
	Amount       int64               `json:"amount,omitempty"`
	Rate         string              `json:"rate,omitempty"`
	BusinessDays bool                `json:"business_days,omitempty"`
	Until        []PublicDiscountDay `json:"until,omitempty"`
}

// PublicDiscountDay is one dated tier of a fixed_until or percent_until
// discount.
type PublicDiscountDay struct {
	Date   string `json:"date"`
	Amount int64  `json:"amount,omitempty"`
	Rate   string `json:"rate,omitempty"`
}

// PublicDuePaid is what a credited due-date charge's payment was made of,
// in centavos: Amount = Original − Abatement − Discount + Fine + Interest
// on Date, the day of payment in Brasília.
type PublicDuePaid struct {
	Date      string `json:"date"`
	Amount    int64  `json:"amount"`
	Original  int64  `json:"original"`
	Fine      int64  `json:"fine"`
	Interest  int64  `json:"interest"`
	Discount  int64  `json:"discount"`
	Abatement int64  `json:"abatement"`
}

// publicDue adds a due-date charge's terms to its public object; an
// immediate charge shows none of these members.
func (c *Charge) publicDue(out *PublicCharge) {
	if c.s.Due == nil {
		return
	}
	p := c.s.Due.Params()
	out.DueDate = p.Due.String()
	out.DaysAfterDue = p.DaysAfterDue
	if f := p.Fine; f != nil {
		out.Fine = &PublicDueRule{Type: string(f.Type), Amount: f.Amount, Rate: f.Rate}
	}
	if i := p.Interest; i != nil {
		out.Interest = &PublicDueRule{Type: string(i.Type), Amount: i.Amount, Rate: i.Rate, BusinessDays: i.BusinessDays}
	}
	if d := p.Discount; d != nil {
		out.Discount = &PublicDueRule{Type: string(d.Type), Amount: d.Amount, Rate: d.Rate, BusinessDays: d.BusinessDays}
		for _, u := range d.Until {
			out.Discount.Until = append(out.Discount.Until, PublicDiscountDay{Date: u.Date.String(), Amount: u.Amount, Rate: u.Rate})
		}
	}
	if a := p.Abatement; a != nil {
		out.Abatement = &PublicDueRule{Type: string(a.Type), Amount: a.Amount, Rate: a.Rate}
	}
	if b, ok := c.PaidBreakdown(); ok {
		out.Paid = &PublicDuePaid{Date: b.Date.String(), Amount: b.AmountDue, Original: b.Original,
			Fine: b.Fine, Interest: b.Interest, Discount: b.Discount, Abatement: b.Abatement}
	}
}
