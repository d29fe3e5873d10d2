package domain

import (
	"slices"

	"github.com/quitapix/quita/domain/bizdays"
)

// Bounds of due-date terms. The API Pix bounds none of these but
// validadeAposVencimento ≥ 0; ten years either way keeps every day count,
// and with it every amount, far inside int64.
const (
	// DefaultDaysAfterDue is DaysAfterDue when the merchant gives none
	// (the API Pix's default for validadeAposVencimento).
	DefaultDaysAfterDue = 30
	// MaxDaysAfterDue bounds DaysAfterDue (0 is allowed: payable up to the
	// due date only).
	MaxDaysAfterDue = 3650
	// MaxDaysToDue bounds how many days after its creation a charge may
	// fall due.
	MaxDaysToDue = 3650
	// MaxChargeRate bounds the rate of a fine or of interest: 1000.00 %.
	MaxChargeRate Rate = 100 * RateWhole / 10
)

// DueTermsParams is the input of NewDueTerms. Created is the day the charge
// was created in Brasília; Due is the due date as the merchant gave it (not
// yet moved off a non-business day). A nil rule is no rule; a nil
// DaysAfterDue is DefaultDaysAfterDue.
type DueTermsParams struct {
	Original     int64
	Created      bizdays.Date
	Due          bizdays.Date
	DaysAfterDue *int
	Fine         *Fine
	Interest     *Interest
	Discount     *Discount
	Abatement    *Abatement
}

// DueTerms are validated due-date terms: the dates a charge can be paid on
// and the rules of its amount. Build them with NewDueTerms; the zero value
// has no terms and AmountDue refuses it.
type DueTerms struct {
	params    DueTermsParams
	effDue    bizdays.Date // Due moved to the next business day
	last      bizdays.Date // the last day a payment is accepted
	abatement int64        // centavos, the same on every day
	fine      *dueValue
	interest  *interestRule
	discount  *discountRule
}

// dueValue is one validated amount-or-rate rule.
type dueValue struct {
	percent bool
	amount  int64
	rate    Rate
}

type interestRule struct {
	per dueValue
	// period is the days one rate is stated for: 1, or a month or year in
	// the rule's kind of day (dayCounts).
	period   int64
	business bool
}

type discountRule struct {
	tiers    []discountTier // *_until, in date order
	perDay   *dueValue      // *_per_day_before
	business bool
}

type discountTier struct {
	moved bizdays.Date // the tier's date moved to the next business day
	value dueValue
}

// dayCounts is how many days of lateness one rate period is: a month is 30
// calendar days or 21 business days, a year 365 calendar days or 252
// business days (twelve months of 21, the Brazilian market's business
// year). So a rate per month or year accrues about the rate named over a
// month or year of lateness whichever days are counted.
func dayCounts(t InterestType, business bool) (int64, bool) {
	switch t {
	case InterestAmountPerDay, InterestPercentPerDay:
		return 1, true
	case InterestPercentPerMonth:
		if business {
			return 21, true
		}
		return 30, true
	case InterestPercentPerYear:
		if business {
			return 252, true
		}
		return 365, true
	}
	return 0, false
}

// NewDueTerms validates p: every combination the API Pix's cobv refuses is
// refused here first, with a *ValidationError naming the rule's Field
// (FieldDiscountUntil indexed by tier). Beyond the spec it refuses rules
// stated as zero (omit the rule instead), and a discount that, on some
// payable day, would take the whole amount left after the abatement.
func NewDueTerms(p DueTermsParams) (DueTerms, error) {
	if p.Original <= 0 || p.Original > MaxAmount {
		return DueTerms{}, Invalid(FieldAmount, "%s must be a positive integer of centavos at most %d", FieldAmount, MaxAmount)
	}
	if !p.Created.Valid() {
		return DueTerms{}, Invalid(FieldID, "due-date terms need the day the charge is created")
	}
	if p.Due.IsZero() {
		return DueTerms{}, Missing(FieldDueDate)
	}
	if !p.Due.Valid() || p.Due.Before(p.Created) {
		return DueTerms{}, Invalid(FieldDueDate, "%s must not be before the day the charge is created", FieldDueDate)
	}
	if p.Due.DaysSince(p.Created) > MaxDaysToDue {
		return DueTerms{}, Invalid(FieldDueDate, "%s must be at most %d days after the charge is created", FieldDueDate, MaxDaysToDue)
	}
	days := DefaultDaysAfterDue
	if p.DaysAfterDue != nil {
		days = *p.DaysAfterDue
	}
	if days < 0 || days > MaxDaysAfterDue {
		return DueTerms{}, Invalid(FieldDaysAfterDue, "%s must be from 0 to %d", FieldDaysAfterDue, MaxDaysAfterDue)
	}
	t := DueTerms{effDue: bizdays.NextBusinessDay(p.Due)}
	t.last = bizdays.NextBusinessDay(t.effDue.AddDays(days))
	if !t.last.Valid() {
		return DueTerms{}, Invalid(FieldDueDate, "%s is too far in the future", FieldDueDate)
	}
	t.params = DueTermsParams{Original: p.Original, Created: p.Created, Due: p.Due, DaysAfterDue: &days}
	if err := t.setAbatement(p.Abatement); err != nil {
		return DueTerms{}, err
	}
	if err := t.setFine(p.Fine); err != nil {
		return DueTerms{}, err
	}
	if err := t.setInterest(p.Interest); err != nil {
		return DueTerms{}, err
	}
	if err := t.setDiscount(p.Discount); err != nil {
		return DueTerms{}, err
	}
	return t, nil
}

// parseValue checks one amount-or-rate rule of f, stated as a rate when
// percent: the other one must be empty, and the value positive and within
// the general bounds.
func parseValue(f Field, percent bool, amount int64, rate string) (dueValue, *ValidationError) {
	if !percent {
		if rate != "" {
			return dueValue{}, Invalid(f, "%s of this type takes an amount, not a rate", f)
		}
		if amount <= 0 || amount > MaxAmount {
			return dueValue{}, Invalid(f, "%s amount must be a positive integer of centavos at most %d", f, MaxAmount)
		}
		return dueValue{amount: amount}, nil
	}
	if amount != 0 {
		return dueValue{}, Invalid(f, "%s of this type takes a rate, not an amount", f)
	}
	r, ok := ParseRate(rate)
	if !ok {
		return dueValue{}, Invalid(f, "%s rate must be a percentage with exactly two decimal places, like \"2.00\"", f)
	}
	if r <= 0 {
		return dueValue{}, Invalid(f, "%s rate must be more than 0.00", f)
	}
	return dueValue{percent: true, rate: r}, nil
}

func (t *DueTerms) setAbatement(a *Abatement) error {
	if a == nil {
		return nil
	}
	if a.Type != AbatementFixed && a.Type != AbatementPercent {
		return Invalid(FieldAbatement, "%s type must be fixed or percent", FieldAbatement)
	}
	v, err := parseValue(FieldAbatement, a.Type == AbatementPercent, a.Amount, a.Rate)
	if err != nil {
		return err
	}
	// The API Pix refuses an abatement of the whole amount or more.
	if v.amount >= t.params.Original || v.rate >= RateWhole {
		return Invalid(FieldAbatement, "%s must be less than the whole %s", FieldAbatement, FieldAmount)
	}
	t.abatement = v.of(t.params.Original, 1, 1)
	t.params.Abatement = &Abatement{Type: a.Type, Amount: v.amount, Rate: v.rateText()}
	return nil
}

func (t *DueTerms) setFine(f *Fine) error {
	if f == nil {
		return nil
	}
	if f.Type != FineFixed && f.Type != FinePercent {
		return Invalid(FieldFine, "%s type must be fixed or percent", FieldFine)
	}
	v, err := parseValue(FieldFine, f.Type == FinePercent, f.Amount, f.Rate)
	if err != nil {
		return err
	}
	if v.rate > MaxChargeRate {
		return Invalid(FieldFine, "%s rate must be at most %s", FieldFine, MaxChargeRate)
	}
	t.fine = &v
	t.params.Fine = &Fine{Type: f.Type, Amount: v.amount, Rate: v.rateText()}
	return nil
}

func (t *DueTerms) setInterest(i *Interest) error {
	if i == nil {
		return nil
	}
	period, ok := dayCounts(i.Type, i.BusinessDays)
	if !ok {
		return Invalid(FieldInterest, "%s type must be amount_per_day, percent_per_day, percent_per_month or percent_per_year", FieldInterest)
	}
	v, err := parseValue(FieldInterest, i.Type != InterestAmountPerDay, i.Amount, i.Rate)
	if err != nil {
		return err
	}
	if v.rate > MaxChargeRate {
		return Invalid(FieldInterest, "%s rate must be at most %s", FieldInterest, MaxChargeRate)
	}
	t.interest = &interestRule{per: v, period: period, business: i.BusinessDays}
	t.params.Interest = &Interest{Type: i.Type, Amount: v.amount, Rate: v.rateText(), BusinessDays: i.BusinessDays}
	return nil
}

// setDiscount validates a discount against the amount left after the
// abatement, which setAbatement has already fixed.
func (t *DueTerms) setDiscount(d *Discount) error {
	if d == nil {
		return nil
	}
	switch d.Type {
	case DiscountFixedUntil, DiscountPercentUntil:
		return t.setDiscountUntil(d)
	case DiscountAmountPerDayBefore, DiscountPercentPerDayBefore:
		return t.setDiscountPerDay(d)
	}
	return Invalid(FieldDiscount, "%s type must be fixed_until, percent_until, amount_per_day_before or percent_per_day_before", FieldDiscount)
}

func (t *DueTerms) setDiscountUntil(d *Discount) error {
	if d.Amount != 0 || d.Rate != "" || d.BusinessDays {
		return Invalid(FieldDiscount, "%s of this type states its amounts or rates in its dates, and counts no days", FieldDiscount)
	}
	if len(d.Until) == 0 {
		return Missing(FieldDiscountUntil)
	}
	if len(d.Until) > MaxDiscountDates {
		return Invalid(FieldDiscountUntil, "%s may hold at most %d dates", FieldDiscountUntil, MaxDiscountDates)
	}
	base := t.params.Original - t.abatement
	rule := &discountRule{tiers: make([]discountTier, 0, len(d.Until))}
	until := make([]DiscountUntil, 0, len(d.Until))
	for i, u := range d.Until {
		switch {
		case !u.Date.Valid():
			return invalidAt(FieldDiscountUntil, i, "each of %s needs a date", FieldDiscountUntil)
		case u.Date.After(t.params.Due):
			return invalidAt(FieldDiscountUntil, i, "%s must not be after the %s", FieldDiscountUntil, FieldDueDate)
		case u.Date.Before(t.params.Created):
			return invalidAt(FieldDiscountUntil, i, "%s must not be before the day the charge is created", FieldDiscountUntil)
		case i > 0 && !u.Date.After(d.Until[i-1].Date):
			return invalidAt(FieldDiscountUntil, i, "%s must be in increasing order", FieldDiscountUntil)
		}
		v, err := parseValue(FieldDiscountUntil, d.Type == DiscountPercentUntil, u.Amount, u.Rate)
		if err != nil {
			err.Indexed, err.Index = true, i
			return err
		}
		// The API Pix refuses a tier of the whole amount or more; the
		// amount compared is what is left after the abatement.
		if v.amount >= base || v.rate >= RateWhole {
			return invalidAt(FieldDiscountUntil, i, "each of %s must be less than the %s after the %s", FieldDiscountUntil, FieldAmount, FieldAbatement)
		}
		rule.tiers = append(rule.tiers, discountTier{moved: bizdays.NextBusinessDay(u.Date), value: v})
		until = append(until, DiscountUntil{Date: u.Date, Amount: v.amount, Rate: v.rateText()})
	}
	t.discount = rule
	t.params.Discount = &Discount{Type: d.Type, Until: until}
	return nil
}

func (t *DueTerms) setDiscountPerDay(d *Discount) error {
	if len(d.Until) != 0 {
		return Invalid(FieldDiscountUntil, "a %s per day takes no %s", FieldDiscount, FieldDiscountUntil)
	}
	v, err := parseValue(FieldDiscount, d.Type == DiscountPercentPerDayBefore, d.Amount, d.Rate)
	if err != nil {
		return err
	}
	// The largest discount is a payment on the day of creation; it must
	// leave at least one centavo of what the abatement leaves. One day is
	// the API Pix's own rule: a discount of the whole amount or more is
	// refused.
	days := max(int64(earlyDays(t.params.Created, t.effDue, d.BusinessDays)), 1)
	base := t.params.Original - t.abatement
	if v.amount >= ceilDiv(base, days) || int64(v.rate) >= ceilDiv(int64(RateWhole), days) {
		return Invalid(FieldDiscount, "%s per day would reach the whole %s after the %s when paid on the day the charge is created", FieldDiscount, FieldAmount, FieldAbatement)
	}
	t.discount = &discountRule{perDay: &v, business: d.BusinessDays}
	t.params.Discount = &Discount{Type: d.Type, Amount: v.amount, Rate: v.rateText(), BusinessDays: d.BusinessDays}
	return nil
}

// ceilDiv is ⌈a/b⌉ for a ≥ 0, b > 0: x·b ≥ a exactly when x ≥ ⌈a/b⌉.
func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

func invalidAt(f Field, i int, format string, args ...any) *ValidationError {
	e := Invalid(f, format, args...)
	e.Indexed, e.Index = true, i
	return e
}

func (v dueValue) rateText() string {
	if !v.percent {
		return ""
	}
	return v.rate.String()
}

// Params returns the terms as validated: rates in their canonical form
// ("02.00" reads back as "2.00"), DaysAfterDue set. NewDueTerms(t.Params())
// gives back terms equal to t, which is how storage reloads them.
func (t DueTerms) Params() DueTermsParams {
	p := t.params
	if p.DaysAfterDue != nil {
		n := *p.DaysAfterDue
		p.DaysAfterDue = &n
	}
	if p.Discount != nil {
		d := *p.Discount
		d.Until = slices.Clone(d.Until)
		p.Discount = &d
	}
	p.Fine, p.Interest, p.Abatement = clonePtr(p.Fine), clonePtr(p.Interest), clonePtr(p.Abatement)
	return p
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// Original is the amount in centavos before any rule.
func (t DueTerms) Original() int64 { return t.params.Original }

// Due is the due date as the merchant gave it.
func (t DueTerms) Due() bizdays.Date { return t.params.Due }

// EffectiveDue is Due moved to the next business day when it falls on a
// weekend or holiday: the last day without fine or interest, and the day
// discounts count to.
func (t DueTerms) EffectiveDue() bizdays.Date { return t.effDue }

// LastPayableDay is the last day a payment is accepted: DaysAfterDue
// calendar days after EffectiveDue, itself moved to the next business day.
func (t DueTerms) LastPayableDay() bizdays.Date { return t.last }
