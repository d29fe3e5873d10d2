package domain

import (
	"strconv"
	"strings"

	"github.com/quitapix/quita/domain/bizdays"
)

// A due-date charge (the API Pix's cobv) is paid for an amount that depends
// on the day of payment: the original amount, less an abatement, less a
// discount for paying early or plus a fine and interest for paying late.
// The merchant states the rules in the types below; NewDueTerms validates
// them and DueTerms.AmountDue computes the amount for a day.
//
// The rules map onto the API Pix's cobv.valor one to one. The acquirer
// adapter translates with this table (modalidade is the spec's number):
//
//	merchant rule                              API Pix
//	fine      fixed                            multa.modalidade 1 (valor fixo), valorPerc = amount
//	fine      percent                          multa.modalidade 2 (percentual), valorPerc = rate
//	interest  amount_per_day                   juros.modalidade 1 (valor, dias corridos)
//	interest  percent_per_day                  juros.modalidade 2 (percentual ao dia, dias corridos)
//	interest  percent_per_month                juros.modalidade 3 (percentual ao mês, dias corridos)
//	interest  percent_per_year                 juros.modalidade 4 (percentual ao ano, dias corridos)
//	interest  amount_per_day,    business_days juros.modalidade 5 (valor, dias úteis)
//	interest  percent_per_day,   business_days juros.modalidade 6 (percentual ao dia, dias úteis)
//	interest  percent_per_month, business_days juros.modalidade 7 (percentual ao mês, dias úteis)
//	interest  percent_per_year,  business_days juros.modalidade 8 (percentual ao ano, dias úteis)
//	discount  fixed_until                      desconto.modalidade 1, descontoDataFixa [{data, valorPerc = amount}]
//	discount  percent_until                    desconto.modalidade 2, descontoDataFixa [{data, valorPerc = rate}]
//	discount  amount_per_day_before            desconto.modalidade 3 (valor por antecipação, dia corrido)
//	discount  amount_per_day_before, b. days   desconto.modalidade 4 (valor por antecipação, dia útil)
//	discount  percent_per_day_before           desconto.modalidade 5 (percentual por antecipação, dia corrido)
//	discount  percent_per_day_before, b. days  desconto.modalidade 6 (percentual por antecipação, dia útil)
//	abatement fixed                            abatimento.modalidade 1 (valor fixo)
//	abatement percent                          abatimento.modalidade 2 (percentual)
//
// Amounts are centavos here and decimal reais ("12.34") in the API Pix;
// rates are the same two-place decimal string in both. The due date and
// DaysAfterDue are calendario.dataDeVencimento and validadeAposVencimento.

// Rate is a percentage in hundredths of a percent: "2.00" (2 %) is 200 and
// RateWhole (100 %) is 10000. It is written and read as a decimal string
// with exactly two places, like the API Pix's valorPerc, and no float ever
// holds it.
type Rate int64

// RateWhole is 100 %.
const RateWhole Rate = 10000

// maxRateDigits is the API Pix's bound on valorPerc: \d{1,10}\.\d{2}.
const maxRateDigits = 10

// ParseRate reads a percentage with one to ten digits, a point and exactly
// two decimals ("2.00", "0.33", "12.5" is refused). ok is false for
// anything else.
func ParseRate(s string) (r Rate, ok bool) {
	whole, frac, found := strings.Cut(s, ".")
	if !found || len(whole) < 1 || len(whole) > maxRateDigits || len(frac) != 2 {
		return 0, false
	}
	for _, c := range whole + frac {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	// At most twelve digits: no overflow.
	n, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		return 0, false
	}
	return Rate(n), true
}

// String writes r with two decimals: 200 → "2.00".
func (r Rate) String() string { return FormatDecimal(int64(r)) }

// FineType is how a fine is stated.
type FineType string

// The fine types.
const (
	FineFixed   FineType = "fixed"
	FinePercent FineType = "percent"
)

// Fine is charged once on any payment after the due date: Amount centavos
// (FineFixed) or Rate of the amount after the abatement (FinePercent).
type Fine struct {
	Type   FineType
	Amount int64
	Rate   string
}

// InterestType is how interest is stated.
type InterestType string

// The interest types.
const (
	InterestAmountPerDay    InterestType = "amount_per_day"
	InterestPercentPerDay   InterestType = "percent_per_day"
	InterestPercentPerMonth InterestType = "percent_per_month"
	InterestPercentPerYear  InterestType = "percent_per_year"
)

// Interest accrues for each day of lateness after the due date: Amount
// centavos a day, or Rate of the amount after the abatement per day, month
// or year, simple (never compounded). BusinessDays counts only business
// days of lateness and converts a rate per month or year over business
// days (see DueTerms.AmountDue).
type Interest struct {
	Type         InterestType
	Amount       int64
	Rate         string
	BusinessDays bool
}

// DiscountType is how a discount for paying early is stated.
type DiscountType string

// The discount types.
const (
	DiscountFixedUntil          DiscountType = "fixed_until"
	DiscountPercentUntil        DiscountType = "percent_until"
	DiscountAmountPerDayBefore  DiscountType = "amount_per_day_before"
	DiscountPercentPerDayBefore DiscountType = "percent_per_day_before"
)

// MaxDiscountDates is how many dated tiers a fixed_until or percent_until
// discount may have (the API Pix's descontoDataFixa holds at most three).
const MaxDiscountDates = 3

// Discount lowers the amount paid on or before the due date. The *_until
// types give Until's tier of the first date on or after the payment day:
// Amount centavos, or Rate of the amount after the abatement. The
// *_per_day_before types give Amount centavos or Rate of the amount after
// the abatement for each day (each business day with BusinessDays) the
// payment comes before the due date.
type Discount struct {
	Type         DiscountType
	Until        []DiscountUntil
	Amount       int64
	Rate         string
	BusinessDays bool
}

// DiscountUntil is one dated tier of a fixed_until (Amount) or
// percent_until (Rate) discount.
type DiscountUntil struct {
	Date   bizdays.Date
	Amount int64
	Rate   string
}

// AbatementType is how an abatement is stated.
type AbatementType string

// The abatement types.
const (
	AbatementFixed   AbatementType = "fixed"
	AbatementPercent AbatementType = "percent"
)

// Abatement is a reduction of the amount owed whatever the day of payment
// (a rebate agreed after billing): Amount centavos, or Rate of the original
// amount.
type Abatement struct {
	Type   AbatementType
	Amount int64
	Rate   string
}
