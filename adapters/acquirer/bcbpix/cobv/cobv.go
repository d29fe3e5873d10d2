// Package cobv translates due-date terms (domain.DueTerms) to and from the
// API Pix's cobv fields — calendario.dataDeVencimento,
// validadeAposVencimento and valor with multa, juros, abatimento and
// desconto — by the modality table in domain/charge_due.go. The bcbpix
// client writes a cobv with it and pixsim reads one with it, so both sides
// of the wire agree by construction.
package cobv

import (
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

// Calendario is a cobv's calendario.
type Calendario struct {
	Criacao                string `json:"criacao,omitempty"`
	DataDeVencimento       string `json:"dataDeVencimento"`
	ValidadeAposVencimento *int   `json:"validadeAposVencimento,omitempty"`
}

// Valor is a cobv's valor. Amounts are decimal reais ("12.34"); valorPerc
// is an amount or a rate by modality.
type Valor struct {
	Original   string    `json:"original"`
	Multa      *Rule     `json:"multa,omitempty"`
	Juros      *Rule     `json:"juros,omitempty"`
	Abatimento *Rule     `json:"abatimento,omitempty"`
	Desconto   *Desconto `json:"desconto,omitempty"`
}

// Rule is multa, juros or abatimento.
type Rule struct {
	Modalidade int    `json:"modalidade"`
	ValorPerc  string `json:"valorPerc"`
}

// Desconto is a cobv's discount: dated tiers (modalidades 1 and 2) or a
// value per day paid early (3 to 6).
type Desconto struct {
	Modalidade       int        `json:"modalidade"`
	DescontoDataFixa []DataFixa `json:"descontoDataFixa,omitempty"`
	ValorPerc        string     `json:"valorPerc,omitempty"`
}

// DataFixa is one dated tier of a discount.
type DataFixa struct {
	Data      string `json:"data"`
	ValorPerc string `json:"valorPerc"`
}

var interestModes = map[domain.InterestType][2]int{ // calendar days, business days
	domain.InterestAmountPerDay:    {1, 5},
	domain.InterestPercentPerDay:   {2, 6},
	domain.InterestPercentPerMonth: {3, 7},
	domain.InterestPercentPerYear:  {4, 8},
}

// Encode is t's calendario (without criacao) and valor.
func Encode(t domain.DueTerms) (Calendario, Valor) {
	p := t.Params()
	cal := Calendario{DataDeVencimento: p.Due.String(), ValidadeAposVencimento: p.DaysAfterDue}
	v := Valor{Original: domain.FormatDecimal(p.Original)}
	if f := p.Fine; f != nil {
		v.Multa = &Rule{Modalidade: 1, ValorPerc: domain.FormatDecimal(f.Amount)}
		if f.Type == domain.FinePercent {
			v.Multa = &Rule{Modalidade: 2, ValorPerc: f.Rate}
		}
	}
	if i := p.Interest; i != nil {
		mode := interestModes[i.Type][0]
		if i.BusinessDays {
			mode = interestModes[i.Type][1]
		}
		v.Juros = &Rule{Modalidade: mode, ValorPerc: amountOrRate(i.Type == domain.InterestAmountPerDay, i.Amount, i.Rate)}
	}
	if a := p.Abatement; a != nil {
		v.Abatimento = &Rule{Modalidade: 1, ValorPerc: domain.FormatDecimal(a.Amount)}
		if a.Type == domain.AbatementPercent {
			v.Abatimento = &Rule{Modalidade: 2, ValorPerc: a.Rate}
		}
	}
	if d := p.Discount; d != nil {
		v.Desconto = encodeDiscount(d)
	}
	return cal, v
}

func encodeDiscount(d *domain.Discount) *Desconto {
	switch d.Type {
	case domain.DiscountFixedUntil, domain.DiscountPercentUntil:
		out := &Desconto{Modalidade: 1}
		if d.Type == domain.DiscountPercentUntil {
			out.Modalidade = 2
		}
		for _, u := range d.Until {
			out.DescontoDataFixa = append(out.DescontoDataFixa,
				DataFixa{Data: u.Date.String(), ValorPerc: amountOrRate(out.Modalidade == 1, u.Amount, u.Rate)})
		}
		return out
	case domain.DiscountAmountPerDayBefore:
		return &Desconto{Modalidade: pick(d.BusinessDays, 4, 3), ValorPerc: domain.FormatDecimal(d.Amount)}
	default: // percent_per_day_before
		return &Desconto{Modalidade: pick(d.BusinessDays, 6, 5), ValorPerc: d.Rate}
	}
}

// Decode is the terms of a cobv of original created on created, or why
// its fields break a rule (a domain.ValidationError naming the rule's
// merchant-facing field).
func Decode(created bizdays.Date, cal Calendario, v Valor) (domain.DueTerms, error) {
	original, err := domain.ParseDecimal(v.Original)
	if err != nil {
		return domain.DueTerms{}, domain.Invalid(domain.FieldAmount, "valor.original: %v", err)
	}
	due, err := bizdays.ParseDate(cal.DataDeVencimento)
	if err != nil {
		return domain.DueTerms{}, domain.Invalid(domain.FieldDueDate, "calendario.dataDeVencimento: %v", err)
	}
	p := domain.DueTermsParams{Original: original, Created: created, Due: due, DaysAfterDue: cal.ValidadeAposVencimento}
	if m := v.Multa; m != nil {
		if p.Fine, err = decodeFine(m); err != nil {
			return domain.DueTerms{}, err
		}
	}
	if j := v.Juros; j != nil {
		if p.Interest, err = decodeInterest(j); err != nil {
			return domain.DueTerms{}, err
		}
	}
	if a := v.Abatimento; a != nil {
		if p.Abatement, err = decodeAbatement(a); err != nil {
			return domain.DueTerms{}, err
		}
	}
	if d := v.Desconto; d != nil {
		if p.Discount, err = decodeDiscount(d); err != nil {
			return domain.DueTerms{}, err
		}
	}
	return domain.NewDueTerms(p)
}

func decodeFine(m *Rule) (*domain.Fine, error) {
	switch m.Modalidade {
	case 1:
		amount, err := decimal(domain.FieldFine, m.ValorPerc)
		return &domain.Fine{Type: domain.FineFixed, Amount: amount}, err
	case 2:
		return &domain.Fine{Type: domain.FinePercent, Rate: m.ValorPerc}, nil
	}
	return nil, badMode(domain.FieldFine, "multa", m.Modalidade)
}

func decodeInterest(j *Rule) (*domain.Interest, error) {
	for typ, modes := range interestModes {
		for i, mode := range modes {
			if mode != j.Modalidade {
				continue
			}
			in := &domain.Interest{Type: typ, BusinessDays: i == 1}
			if typ != domain.InterestAmountPerDay {
				in.Rate = j.ValorPerc
				return in, nil
			}
			var err error
			in.Amount, err = decimal(domain.FieldInterest, j.ValorPerc)
			return in, err
		}
	}
	return nil, badMode(domain.FieldInterest, "juros", j.Modalidade)
}

func decodeAbatement(a *Rule) (*domain.Abatement, error) {
	switch a.Modalidade {
	case 1:
		amount, err := decimal(domain.FieldAbatement, a.ValorPerc)
		return &domain.Abatement{Type: domain.AbatementFixed, Amount: amount}, err
	case 2:
		return &domain.Abatement{Type: domain.AbatementPercent, Rate: a.ValorPerc}, nil
	}
	return nil, badMode(domain.FieldAbatement, "abatimento", a.Modalidade)
}

func decodeDiscount(d *Desconto) (*domain.Discount, error) {
	switch d.Modalidade {
	case 1, 2:
		out := &domain.Discount{Type: domain.DiscountFixedUntil}
		if d.Modalidade == 2 {
			out.Type = domain.DiscountPercentUntil
		}
		for _, f := range d.DescontoDataFixa {
			date, err := bizdays.ParseDate(f.Data)
			if err != nil {
				return nil, domain.Invalid(domain.FieldDiscountUntil, "desconto.descontoDataFixa.data: %v", err)
			}
			u := domain.DiscountUntil{Date: date, Rate: f.ValorPerc}
			if d.Modalidade == 1 {
				u.Rate = ""
				if u.Amount, err = decimal(domain.FieldDiscountUntil, f.ValorPerc); err != nil {
					return nil, err
				}
			}
			out.Until = append(out.Until, u)
		}
		return out, nil
	case 3, 4:
		amount, err := decimal(domain.FieldDiscount, d.ValorPerc)
		return &domain.Discount{Type: domain.DiscountAmountPerDayBefore, Amount: amount, BusinessDays: d.Modalidade == 4}, err
	case 5, 6:
		return &domain.Discount{Type: domain.DiscountPercentPerDayBefore, Rate: d.ValorPerc, BusinessDays: d.Modalidade == 6}, nil
	}
	return nil, badMode(domain.FieldDiscount, "desconto", d.Modalidade)
}

func amountOrRate(amount bool, centavos int64, rate string) string {
	if amount {
		return domain.FormatDecimal(centavos)
	}
	return rate
}

func pick(cond bool, yes, no int) int {
	if cond {
		return yes
	}
	return no
}

func decimal(f domain.Field, s string) (int64, error) {
	n, err := domain.ParseDecimal(s)
	if err != nil {
		return 0, domain.Invalid(f, "valorPerc: %v", err)
	}
	return n, nil
}

func badMode(f domain.Field, name string, mode int) error {
	return domain.Invalid(f, "%s.modalidade %d is not one the API Pix defines", name, mode)
}
