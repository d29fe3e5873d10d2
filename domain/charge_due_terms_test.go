package domain_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

func day(s string) bizdays.Date {
	d, err := bizdays.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

func intp(n int) *int { return &n }

// dueBase is a charge of R$ 1,000.00 created on Monday 2 Mar 2026 and due
// on Tuesday 31 Mar 2026, a business day; with the default 30 days after
// due it is payable until Thursday 30 Apr 2026.
func dueBase() domain.DueTermsParams {
	return domain.DueTermsParams{Original: 100000, Created: day("2026-03-02"), Due: day("2026-03-31")}
}

func dueTerms(t *testing.T, edit func(*domain.DueTermsParams)) domain.DueTerms {
	t.Helper()
	p := dueBase()
	if edit != nil {
		edit(&p)
	}
	terms, err := domain.NewDueTerms(p)
	if err != nil {
		t.Fatalf("NewDueTerms: %v", err)
	}
	return terms
}

func TestParseRate(t *testing.T) {
	t.Parallel()
	good := map[string]domain.Rate{
		"2.00": 200, "0.01": 1, "0.33": 33, "100.00": 10000, "02.50": 250, "9999999999.99": 999999999999,
	}
	for s, want := range good {
		if got, ok := domain.ParseRate(s); !ok || got != want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d", s, got, ok, want)
		}
	}
	for _, s := range []string{"", "2", "2.0", "2.000", ".50", "2.", "-1.00", "+1.00", "1,00", " 2.00",
		"2.00 ", "1e2.00", "12345678901.00", "٢.00", "2.0O"} {
		if got, ok := domain.ParseRate(s); ok {
			t.Errorf("ParseRate(%q) = %d, want refused", s, got)
		}
	}
	if s := domain.Rate(5).String(); s != "0.05" {
		t.Errorf("Rate(5) = %q", s)
	}
}

func TestNewDueTermsRefuses(t *testing.T) {
	t.Parallel()
	fixed := func(dates ...string) []domain.DiscountUntil {
		out := make([]domain.DiscountUntil, len(dates))
		for i, s := range dates {
			out[i] = domain.DiscountUntil{Date: day(s), Amount: 100}
		}
		return out
	}
	tests := []struct {
		name    string
		edit    func(*domain.DueTermsParams)
		field   domain.Field
		index   int // -1: not indexed
		missing bool
	}{
		{"zero amount", func(p *domain.DueTermsParams) { p.Original = 0 }, domain.FieldAmount, -1, false},
		{"negative amount", func(p *domain.DueTermsParams) { p.Original = -1 }, domain.FieldAmount, -1, false},
		{"amount over the bound", func(p *domain.DueTermsParams) { p.Original = domain.MaxAmount + 1 }, domain.FieldAmount, -1, false},
		{"no day of creation", func(p *domain.DueTermsParams) { p.Created = bizdays.Date{} }, domain.FieldID, -1, false},
		{"no due date", func(p *domain.DueTermsParams) { p.Due = bizdays.Date{} }, domain.FieldDueDate, -1, true},
		{"due before creation", func(p *domain.DueTermsParams) { p.Due = day("2026-03-01") }, domain.FieldDueDate, -1, false},
		{"due over ten years out", func(p *domain.DueTermsParams) { p.Due = p.Created.AddDays(domain.MaxDaysToDue + 1) }, domain.FieldDueDate, -1, false},
		{"last day past the calendar", func(p *domain.DueTermsParams) {
			p.Created, p.Due = day("9999-12-01"), day("9999-12-30")
		}, domain.FieldDueDate, -1, false},
		{"negative days after due", func(p *domain.DueTermsParams) { p.DaysAfterDue = intp(-1) }, domain.FieldDaysAfterDue, -1, false},
		{"days after due over the bound", func(p *domain.DueTermsParams) { p.DaysAfterDue = intp(domain.MaxDaysAfterDue + 1) }, domain.FieldDaysAfterDue, -1, false},

		{"fine of no type", func(p *domain.DueTermsParams) { p.Fine = &domain.Fine{Amount: 100} }, domain.FieldFine, -1, false},
		{"fine of an unknown type", func(p *domain.DueTermsParams) { p.Fine = &domain.Fine{Type: "percentage", Rate: "2.00"} }, domain.FieldFine, -1, false},
		{"fixed fine with a rate", func(p *domain.DueTermsParams) {
			p.Fine = &domain.Fine{Type: domain.FineFixed, Amount: 100, Rate: "2.00"}
		}, domain.FieldFine, -1, false},
		{"percent fine with an amount", func(p *domain.DueTermsParams) {
			p.Fine = &domain.Fine{Type: domain.FinePercent, Amount: 100, Rate: "2.00"}
		}, domain.FieldFine, -1, false},
		{"percent fine with no rate", func(p *domain.DueTermsParams) { p.Fine = &domain.Fine{Type: domain.FinePercent} }, domain.FieldFine, -1, false},
		{"rate with one place", func(p *domain.DueTermsParams) { p.Fine = &domain.Fine{Type: domain.FinePercent, Rate: "2.0"} }, domain.FieldFine, -1, false},
		{"rate with three places", func(p *domain.DueTermsParams) { p.Fine = &domain.Fine{Type: domain.FinePercent, Rate: "2.000"} }, domain.FieldFine, -1, false},
		{"rate with no point", func(p *domain.DueTermsParams) { p.Fine = &domain.Fine{Type: domain.FinePercent, Rate: "2"} }, domain.FieldFine, -1, false},
		{"negative rate", func(p *domain.DueTermsParams) { p.Fine = &domain.Fine{Type: domain.FinePercent, Rate: "-2.00"} }, domain.FieldFine, -1, false},
		{"zero rate", func(p *domain.DueTermsParams) { p.Fine = &domain.Fine{Type: domain.FinePercent, Rate: "0.00"} }, domain.FieldFine, -1, false},
		{"fine rate over 1000 %", func(p *domain.DueTermsParams) { p.Fine = &domain.Fine{Type: domain.FinePercent, Rate: "1000.01"} }, domain.FieldFine, -1, false},
		{"negative fixed fine", func(p *domain.DueTermsParams) { p.Fine = &domain.Fine{Type: domain.FineFixed, Amount: -1} }, domain.FieldFine, -1, false},
		{"zero fixed fine", func(p *domain.DueTermsParams) { p.Fine = &domain.Fine{Type: domain.FineFixed} }, domain.FieldFine, -1, false},

		{"interest of an unknown type", func(p *domain.DueTermsParams) { p.Interest = &domain.Interest{Type: "percent_per_week", Rate: "1.00"} }, domain.FieldInterest, -1, false},
		{"amount per day with a rate", func(p *domain.DueTermsParams) {
			p.Interest = &domain.Interest{Type: domain.InterestAmountPerDay, Amount: 10, Rate: "1.00"}
		}, domain.FieldInterest, -1, false},
		{"percent per month with no rate", func(p *domain.DueTermsParams) { p.Interest = &domain.Interest{Type: domain.InterestPercentPerMonth} }, domain.FieldInterest, -1, false},
		{"negative interest amount", func(p *domain.DueTermsParams) {
			p.Interest = &domain.Interest{Type: domain.InterestAmountPerDay, Amount: -10}
		}, domain.FieldInterest, -1, false},
		{"interest rate over 1000 %", func(p *domain.DueTermsParams) {
			p.Interest = &domain.Interest{Type: domain.InterestPercentPerYear, Rate: "1000.01"}
		}, domain.FieldInterest, -1, false},

		{"discount of an unknown type", func(p *domain.DueTermsParams) { p.Discount = &domain.Discount{Type: "fixed", Amount: 100} }, domain.FieldDiscount, -1, false},
		{"fixed_until with no dates", func(p *domain.DueTermsParams) { p.Discount = &domain.Discount{Type: domain.DiscountFixedUntil} }, domain.FieldDiscountUntil, -1, true},
		{"four discount dates", func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountFixedUntil, Until: fixed("2026-03-03", "2026-03-04", "2026-03-05", "2026-03-06")}
		}, domain.FieldDiscountUntil, -1, false},
		{"discount date after the due date", func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountFixedUntil, Until: fixed("2026-03-10", "2026-04-01")}
		}, domain.FieldDiscountUntil, 1, false},
		{"discount date before creation", func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountFixedUntil, Until: fixed("2026-03-01")}
		}, domain.FieldDiscountUntil, 0, false},
		{"repeated discount date", func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountFixedUntil, Until: fixed("2026-03-10", "2026-03-20", "2026-03-20")}
		}, domain.FieldDiscountUntil, 2, false},
		{"decreasing discount dates", func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountFixedUntil, Until: fixed("2026-03-20", "2026-03-10")}
		}, domain.FieldDiscountUntil, 1, false},
		{"discount tier with no date", func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountFixedUntil, Until: []domain.DiscountUntil{{Amount: 100}}}
		}, domain.FieldDiscountUntil, 0, false},
		{"fixed discount of the whole amount", func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountFixedUntil, Until: []domain.DiscountUntil{{Date: day("2026-03-10"), Amount: 100000}}}
		}, domain.FieldDiscountUntil, 0, false},
		{"fixed discount of what the abatement leaves", func(p *domain.DueTermsParams) {
			p.Abatement = &domain.Abatement{Type: domain.AbatementFixed, Amount: 40000}
			p.Discount = &domain.Discount{Type: domain.DiscountFixedUntil, Until: []domain.DiscountUntil{{Date: day("2026-03-10"), Amount: 60000}}}
		}, domain.FieldDiscountUntil, 0, false},
		{"percent discount of 100 %", func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountPercentUntil, Until: []domain.DiscountUntil{{Date: day("2026-03-10"), Rate: "100.00"}}}
		}, domain.FieldDiscountUntil, 0, false},
		{"percent tier with an amount", func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountPercentUntil, Until: []domain.DiscountUntil{{Date: day("2026-03-10"), Amount: 100}}}
		}, domain.FieldDiscountUntil, 0, false},
		{"negative tier amount", func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountFixedUntil, Until: []domain.DiscountUntil{{Date: day("2026-03-10"), Amount: -100}}}
		}, domain.FieldDiscountUntil, 0, false},
		{"fixed_until with an amount of its own", func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountFixedUntil, Amount: 5, Until: fixed("2026-03-10")}
		}, domain.FieldDiscount, -1, false},
		{"fixed_until counting business days", func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountFixedUntil, BusinessDays: true, Until: fixed("2026-03-10")}
		}, domain.FieldDiscount, -1, false},
		{"per-day discount with dates", func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountAmountPerDayBefore, Amount: 10, Until: fixed("2026-03-10")}
		}, domain.FieldDiscountUntil, -1, false},
		// 29 days from creation to the due date: 3449 × 29 = 100021 ≥ 100000.
		{"amount per day reaching the whole", func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountAmountPerDayBefore, Amount: 3449}
		}, domain.FieldDiscount, -1, false},
		// 3.45 % × 29 = 100.05 %.
		{"percent per day reaching the whole", func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountPercentPerDayBefore, Rate: "3.45"}
		}, domain.FieldDiscount, -1, false},
		// 21 business days from Mon 2 Mar to Tue 31 Mar: 4.77 % × 21 = 100.17 %.
		{"percent per business day reaching the whole", func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountPercentPerDayBefore, Rate: "4.77", BusinessDays: true}
		}, domain.FieldDiscount, -1, false},

		{"abatement of an unknown type", func(p *domain.DueTermsParams) { p.Abatement = &domain.Abatement{Type: "rebate", Amount: 1} }, domain.FieldAbatement, -1, false},
		{"abatement of the whole amount", func(p *domain.DueTermsParams) {
			p.Abatement = &domain.Abatement{Type: domain.AbatementFixed, Amount: 100000}
		}, domain.FieldAbatement, -1, false},
		{"abatement of 100 %", func(p *domain.DueTermsParams) {
			p.Abatement = &domain.Abatement{Type: domain.AbatementPercent, Rate: "100.00"}
		}, domain.FieldAbatement, -1, false},
		{"negative abatement", func(p *domain.DueTermsParams) {
			p.Abatement = &domain.Abatement{Type: domain.AbatementFixed, Amount: -1}
		}, domain.FieldAbatement, -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := dueBase()
			tt.edit(&p)
			_, err := domain.NewDueTerms(p)
			var ve *domain.ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, domain.ErrValidation) {
				t.Fatalf("err = %v, want a ValidationError", err)
			}
			if ve.Field != tt.field || ve.Indexed != (tt.index >= 0) || (tt.index >= 0 && ve.Index != tt.index) {
				t.Errorf("err = %v (field %q, indexed %v at %d), want field %q at %d", err, ve.Field, ve.Indexed, ve.Index, tt.field, tt.index)
			}
			if want := map[bool]string{true: domain.CodeParameterMissing, false: domain.CodeParameterInvalid}[tt.missing]; ve.Code != want {
				t.Errorf("code = %s, want %s", ve.Code, want)
			}
		})
	}
}

// The edges of each bound are accepted, and what is accepted survives the
// trip through Params: storage reloads terms with NewDueTerms(t.Params()).
func TestNewDueTermsAcceptsAndRoundTrips(t *testing.T) {
	t.Parallel()
	tests := map[string]func(*domain.DueTermsParams){
		"no rules":           func(p *domain.DueTermsParams) {},
		"due on creation":    func(p *domain.DueTermsParams) { p.Due = p.Created },
		"no days after due":  func(p *domain.DueTermsParams) { p.DaysAfterDue = intp(0) },
		"ten years after":    func(p *domain.DueTermsParams) { p.DaysAfterDue = intp(domain.MaxDaysAfterDue) },
		"due in ten years":   func(p *domain.DueTermsParams) { p.Due = p.Created.AddDays(domain.MaxDaysToDue) },
		"largest amount":     func(p *domain.DueTermsParams) { p.Original = domain.MaxAmount },
		"leading zero rate":  func(p *domain.DueTermsParams) { p.Fine = &domain.Fine{Type: domain.FinePercent, Rate: "02.00"} },
		"fine rate of 1000%": func(p *domain.DueTermsParams) { p.Fine = &domain.Fine{Type: domain.FinePercent, Rate: "1000.00"} },
		"everything": func(p *domain.DueTermsParams) {
			p.Fine = &domain.Fine{Type: domain.FineFixed, Amount: 500}
			p.Interest = &domain.Interest{Type: domain.InterestPercentPerMonth, Rate: "1.00", BusinessDays: true}
			p.Abatement = &domain.Abatement{Type: domain.AbatementPercent, Rate: "10.00"}
			p.Discount = &domain.Discount{Type: domain.DiscountPercentUntil, Until: []domain.DiscountUntil{
				{Date: day("2026-03-02"), Rate: "5.00"}, {Date: day("2026-03-15"), Rate: "3.00"}, {Date: day("2026-03-31"), Rate: "99.99"},
			}}
		},
		// 3448 × 29 = 99992 < 100000; 3.44 % × 29 = 99.76 %; 4.76 % × 21 = 99.96 %.
		"largest amount per day": func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountAmountPerDayBefore, Amount: 3448}
		},
		"largest percent per day": func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountPercentPerDayBefore, Rate: "3.44"}
		},
		"largest percent per business day": func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountPercentPerDayBefore, Rate: "4.76", BusinessDays: true}
		},
		"fixed discount just under base": func(p *domain.DueTermsParams) {
			p.Abatement = &domain.Abatement{Type: domain.AbatementFixed, Amount: 40000}
			p.Discount = &domain.Discount{Type: domain.DiscountFixedUntil, Until: []domain.DiscountUntil{{Date: day("2026-03-31"), Amount: 59999}}}
		},
	}
	for name, edit := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			terms := dueTerms(t, edit)
			again, err := domain.NewDueTerms(terms.Params())
			if err != nil {
				t.Fatalf("NewDueTerms(Params()) = %v", err)
			}
			if !reflect.DeepEqual(again, terms) {
				t.Errorf("terms changed through Params:\n%+v\n%+v", terms, again)
			}
		})
	}
	terms := dueTerms(t, func(p *domain.DueTermsParams) { p.Fine = &domain.Fine{Type: domain.FinePercent, Rate: "02.00"} })
	p := terms.Params()
	if p.Fine.Rate != "2.00" || *p.DaysAfterDue != domain.DefaultDaysAfterDue {
		t.Errorf("Params = fine %+v, days after due %d; want the canonical rate and the default days", p.Fine, *p.DaysAfterDue)
	}
	// Params hands out copies.
	p.Fine.Rate, *p.DaysAfterDue = "9.00", 1
	if q := terms.Params(); q.Fine.Rate != "2.00" || *q.DaysAfterDue != domain.DefaultDaysAfterDue {
		t.Errorf("editing Params changed the terms: %+v", q)
	}
}
