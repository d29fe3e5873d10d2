package domain_test

import (
	"errors"
	"testing"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

// want is the expected breakdown of one day; AmountDue is checked against
// the sum of the parts as well as against amount.
type want struct {
	amount, fine, interest, discount, abatement int64
}

func checkDue(t *testing.T, terms domain.DueTerms, on string, w want) {
	t.Helper()
	b, err := terms.AmountDue(day(on))
	if err != nil {
		t.Fatalf("AmountDue(%s): %v", on, err)
	}
	got := want{b.AmountDue, b.Fine, b.Interest, b.Discount, b.Abatement}
	if got != w || b.Original != terms.Original() || b.Date != day(on) {
		t.Errorf("AmountDue(%s) = %+v, want %+v", on, b, w)
	}
	if sum := b.Original - b.Abatement - b.Discount + b.Fine + b.Interest; sum != b.AmountDue {
		t.Errorf("AmountDue(%s) = %d, but its parts sum to %d", on, b.AmountDue, sum)
	}
}

// Every case is R$ 1,000.00 (100000) due on Tuesday 31 Mar 2026 (dueBase),
// unless it says otherwise. April 2026 has Good Friday on the 3rd and
// Tiradentes on Tuesday the 21st.
func TestAmountDueModalities(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(*domain.DueTermsParams)
		on   string
		want want
	}{
		{"no rules, on the due date", nil, "2026-03-31", want{amount: 100000}},
		{"no rules, late", nil, "2026-04-30", want{amount: 100000}},

		// Fine: once, on any day after the due date.
		{"fixed fine, on the due date", func(p *domain.DueTermsParams) { p.Fine = &domain.Fine{Type: domain.FineFixed, Amount: 500} },
			"2026-03-31", want{amount: 100000}},
		{"fixed fine, a day late", func(p *domain.DueTermsParams) { p.Fine = &domain.Fine{Type: domain.FineFixed, Amount: 500} },
			"2026-04-01", want{amount: 100500, fine: 500}},
		// 100000 × 2.00 % = 2000, whatever the days.
		{"percent fine, a month late", func(p *domain.DueTermsParams) { p.Fine = &domain.Fine{Type: domain.FinePercent, Rate: "2.00"} },
			"2026-04-30", want{amount: 102000, fine: 2000}},

		// Interest over calendar days: 10 Apr is 10 days after 31 Mar.
		{"amount per day", func(p *domain.DueTermsParams) {
			p.Interest = &domain.Interest{Type: domain.InterestAmountPerDay, Amount: 33}
		}, "2026-04-10", want{amount: 100330, interest: 330}}, // 33 × 10
		{"percent per day", func(p *domain.DueTermsParams) {
			p.Interest = &domain.Interest{Type: domain.InterestPercentPerDay, Rate: "0.33"}
		}, "2026-04-10", want{amount: 103300, interest: 3300}}, // 100000 × 33 × 10 / 10000
		{"percent per month", func(p *domain.DueTermsParams) {
			p.Interest = &domain.Interest{Type: domain.InterestPercentPerMonth, Rate: "1.00"}
		}, "2026-04-15", want{amount: 100500, interest: 500}}, // 100000 × 100 × 15 / (10000 × 30)
		{"percent per year", func(p *domain.DueTermsParams) {
			p.Interest = &domain.Interest{Type: domain.InterestPercentPerYear, Rate: "12.00"}
		}, "2026-04-30", want{amount: 100986, interest: 986}}, // 100000 × 1200 × 30 / (10000 × 365) = 986.30
		{"interest on the due date", func(p *domain.DueTermsParams) {
			p.Interest = &domain.Interest{Type: domain.InterestAmountPerDay, Amount: 33}
		}, "2026-03-31", want{amount: 100000}},

		// Interest over business days: 1, 2, 6–10 Apr are the 7 business
		// days after 31 Mar up to Fri 10 Apr (Good Friday is not one).
		{"amount per business day", func(p *domain.DueTermsParams) {
			p.Interest = &domain.Interest{Type: domain.InterestAmountPerDay, Amount: 100, BusinessDays: true}
		}, "2026-04-10", want{amount: 100700, interest: 700}}, // 100 × 7
		// Sat 4 Apr: 1 and 2 Apr, 2 business days.
		{"percent per business day, on a Saturday", func(p *domain.DueTermsParams) {
			p.Interest = &domain.Interest{Type: domain.InterestPercentPerDay, Rate: "0.10", BusinessDays: true}
		}, "2026-04-04", want{amount: 100200, interest: 200}}, // 100000 × 10 × 2 / 10000
		// To 30 Apr: 22 weekdays less the 3rd and the 21st = 20 business days.
		{"percent per month, business days", func(p *domain.DueTermsParams) {
			p.Interest = &domain.Interest{Type: domain.InterestPercentPerMonth, Rate: "1.00", BusinessDays: true}
		}, "2026-04-30", want{amount: 100952, interest: 952}}, // 100000 × 100 × 20 / (10000 × 21) = 952.38
		{"percent per year, business days", func(p *domain.DueTermsParams) {
			p.Interest = &domain.Interest{Type: domain.InterestPercentPerYear, Rate: "12.00", BusinessDays: true}
		}, "2026-04-30", want{amount: 100952, interest: 952}}, // 100000 × 1200 × 20 / (10000 × 252) = 952.38
		// Fine and interest together: 2000 + 100000 × 100 × 30 / 300000 = 2000 + 1000.
		{"fine and interest", func(p *domain.DueTermsParams) {
			p.Fine = &domain.Fine{Type: domain.FinePercent, Rate: "2.00"}
			p.Interest = &domain.Interest{Type: domain.InterestPercentPerMonth, Rate: "1.00"}
		}, "2026-04-30", want{amount: 103000, fine: 2000, interest: 1000}},

		// Discount per day before, calendar: 31 Mar − 21 Mar = 10 days.
		{"amount per day before", func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountAmountPerDayBefore, Amount: 10}
		}, "2026-03-21", want{amount: 99900, discount: 100}},
		{"amount per day before, on creation", func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountAmountPerDayBefore, Amount: 10}
		}, "2026-03-02", want{amount: 99710, discount: 290}}, // 10 × 29
		{"amount per day before, on the due date", func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountAmountPerDayBefore, Amount: 10}
		}, "2026-03-31", want{amount: 100000}},
		{"percent per day before", func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountPercentPerDayBefore, Rate: "0.10"}
		}, "2026-03-21", want{amount: 99000, discount: 1000}}, // 100000 × 10 × 10 / 10000
		// Business days after Fri 20 Mar up to 31 Mar: 23–27, 30, 31 = 7.
		{"percent per business day before", func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountPercentPerDayBefore, Rate: "0.10", BusinessDays: true}
		}, "2026-03-20", want{amount: 99300, discount: 700}},
		// From Sat 28 Mar: 30 and 31 Mar, 2 business days.
		{"amount per business day before, on a Saturday", func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountAmountPerDayBefore, Amount: 150, BusinessDays: true}
		}, "2026-03-28", want{amount: 99700, discount: 300}},
		{"discount never applies late", func(p *domain.DueTermsParams) {
			p.Discount = &domain.Discount{Type: domain.DiscountAmountPerDayBefore, Amount: 10}
			p.Fine = &domain.Fine{Type: domain.FineFixed, Amount: 500}
		}, "2026-04-01", want{amount: 100500, fine: 500}},

		// Abatement: taken on every day, and the base of every percentage.
		{"fixed abatement, early", func(p *domain.DueTermsParams) {
			p.Abatement = &domain.Abatement{Type: domain.AbatementFixed, Amount: 10000}
		},
			"2026-03-02", want{amount: 90000, abatement: 10000}},
		// Base 90000: fine 90000 × 2 % = 1800.
		{"fixed abatement and percent fine", func(p *domain.DueTermsParams) {
			p.Abatement = &domain.Abatement{Type: domain.AbatementFixed, Amount: 10000}
			p.Fine = &domain.Fine{Type: domain.FinePercent, Rate: "2.00"}
		}, "2026-04-01", want{amount: 91800, fine: 1800, abatement: 10000}},
		// 100000 × 10 % = 10000; base 90000; discount 90000 × 5 % = 4500.
		{"percent abatement and percent discount", func(p *domain.DueTermsParams) {
			p.Abatement = &domain.Abatement{Type: domain.AbatementPercent, Rate: "10.00"}
			p.Discount = &domain.Discount{Type: domain.DiscountPercentUntil, Until: []domain.DiscountUntil{{Date: day("2026-03-10"), Rate: "5.00"}}}
		}, "2026-03-10", want{amount: 85500, discount: 4500, abatement: 10000}},
		// Base 90000, 15 days: 90000 × 100 × 15 / 300000 = 450.
		{"abatement and interest", func(p *domain.DueTermsParams) {
			p.Abatement = &domain.Abatement{Type: domain.AbatementPercent, Rate: "10.00"}
			p.Interest = &domain.Interest{Type: domain.InterestPercentPerMonth, Rate: "1.00"}
		}, "2026-04-15", want{amount: 90450, interest: 450, abatement: 10000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkDue(t, dueTerms(t, tt.edit), tt.on, tt.want)
		})
	}
}

// Three tiers: R$ 30 off until 10 Mar, R$ 20 until 20 Mar (a Friday), R$ 10
// until the due date; each tier holds through its own date.
func TestAmountDueDiscountTiers(t *testing.T) {
	t.Parallel()
	terms := dueTerms(t, func(p *domain.DueTermsParams) {
		p.Discount = &domain.Discount{Type: domain.DiscountFixedUntil, Until: []domain.DiscountUntil{
			{Date: day("2026-03-10"), Amount: 3000}, {Date: day("2026-03-20"), Amount: 2000}, {Date: day("2026-03-31"), Amount: 1000},
		}}
	})
	for on, discount := range map[string]int64{
		"2026-03-02": 3000, "2026-03-10": 3000, "2026-03-11": 2000, "2026-03-20": 2000,
		"2026-03-21": 1000, "2026-03-31": 1000, "2026-04-01": 0,
	} {
		checkDue(t, terms, on, want{amount: 100000 - discount, discount: discount})
	}
	// A tier dated on a Sunday (15 Mar) holds until Monday 16 Mar, as the
	// due date would.
	sunday := dueTerms(t, func(p *domain.DueTermsParams) {
		p.Discount = &domain.Discount{Type: domain.DiscountPercentUntil, Until: []domain.DiscountUntil{{Date: day("2026-03-15"), Rate: "5.00"}}}
	})
	checkDue(t, sunday, "2026-03-16", want{amount: 95000, discount: 5000})
	checkDue(t, sunday, "2026-03-17", want{amount: 100000})
}

// Each component is rounded down to the centavo once, from the exact
// product: never half-up, never half-down, never per day.
func TestAmountDueRoundsDown(t *testing.T) {
	t.Parallel()
	fine := func(original int64, rate string) domain.DueTerms {
		return dueTerms(t, func(p *domain.DueTermsParams) {
			p.Original = original
			p.Fine = &domain.Fine{Type: domain.FinePercent, Rate: rate}
		})
	}
	checkDue(t, fine(99, "1.00"), "2026-04-01", want{amount: 99})                // 0.99 → 0
	checkDue(t, fine(150, "1.00"), "2026-04-01", want{amount: 151, fine: 1})     // 1.50 → 1 (half-up would give 2)
	checkDue(t, fine(151, "1.00"), "2026-04-01", want{amount: 152, fine: 1})     // 1.51 → 1 (half-down would give 2)
	checkDue(t, fine(199, "1.00"), "2026-04-01", want{amount: 200, fine: 1})     // 1.99 → 1
	checkDue(t, fine(200, "1.00"), "2026-04-01", want{amount: 202, fine: 2})     // 2.00 exactly
	checkDue(t, fine(1, "1000.00"), "2026-04-01", want{amount: 11, fine: 10})    // 1 × 10 exactly
	checkDue(t, fine(3, "33.33"), "2026-04-01", want{amount: 3})                 // 0.9999 → 0
	checkDue(t, fine(10000, "0.01"), "2026-04-01", want{amount: 10001, fine: 1}) // 1.00 exactly

	// 0.33 % a day of R$ 1.00 is 0.33 centavos a day: rounding each day
	// would never charge anything, rounding the total charges 1 centavo on
	// the 4th day (1.32).
	perDay := dueTerms(t, func(p *domain.DueTermsParams) {
		p.Original = 100
		p.Interest = &domain.Interest{Type: domain.InterestPercentPerDay, Rate: "0.33"}
	})
	checkDue(t, perDay, "2026-04-03", want{amount: 100})              // 3 days: 0.99
	checkDue(t, perDay, "2026-04-04", want{amount: 101, interest: 1}) // 4 days: 1.32
	checkDue(t, perDay, "2026-04-10", want{amount: 103, interest: 3}) // 10 days: 3.30

	// Rounding down a discount or a percent abatement favours the merchant.
	discount := dueTerms(t, func(p *domain.DueTermsParams) {
		p.Original = 199
		p.Discount = &domain.Discount{Type: domain.DiscountPercentUntil, Until: []domain.DiscountUntil{{Date: day("2026-03-31"), Rate: "0.50"}}}
	})
	checkDue(t, discount, "2026-03-31", want{amount: 199}) // 0.995 → 0
	abatement := dueTerms(t, func(p *domain.DueTermsParams) {
		p.Original = 100
		p.Abatement = &domain.Abatement{Type: domain.AbatementPercent, Rate: "33.33"}
	})
	checkDue(t, abatement, "2026-03-31", want{amount: 67, abatement: 33}) // 33.33 → 33
}

// Every day from 1 to 365 days late: a fixed fine plus R$ 0.07 a day, and
// 12 % a year, which after exactly 365 days is 12 % of the base.
func TestAmountDueUpToAYearLate(t *testing.T) {
	t.Parallel()
	terms := dueTerms(t, func(p *domain.DueTermsParams) {
		p.DaysAfterDue = intp(365)
		p.Fine = &domain.Fine{Type: domain.FineFixed, Amount: 200}
		p.Interest = &domain.Interest{Type: domain.InterestAmountPerDay, Amount: 7}
	})
	// 31 Mar 2027 is a Wednesday, a business day.
	if got := terms.LastPayableDay(); got != day("2027-03-31") {
		t.Fatalf("LastPayableDay = %v", got)
	}
	due := terms.EffectiveDue()
	for k := 0; k <= 365; k++ {
		w := want{amount: 100000}
		if k > 0 {
			w = want{amount: 100000 + 200 + 7*int64(k), fine: 200, interest: 7 * int64(k)}
		}
		checkDue(t, terms, due.AddDays(k).String(), w)
	}
	if _, err := terms.AmountDue(due.AddDays(366)); !errors.Is(err, domain.ErrOverdueClosed) {
		t.Errorf("366 days late: err = %v, want ErrOverdueClosed", err)
	}
	yearly := dueTerms(t, func(p *domain.DueTermsParams) {
		p.DaysAfterDue = intp(365)
		p.Interest = &domain.Interest{Type: domain.InterestPercentPerYear, Rate: "12.00"}
	})
	checkDue(t, yearly, "2027-03-31", want{amount: 112000, interest: 12000}) // 100000 × 1200 × 365 / (10000 × 365)
	checkDue(t, yearly, "2026-04-01", want{amount: 100032, interest: 32})    // 100000 × 1200 / 3650000 = 32.88
}

// A due date on a weekend or holiday moves to the next business day: no
// fine or interest until that day has passed, and the late days and the
// days after due count from it.
func TestAmountDueMovedDueDate(t *testing.T) {
	t.Parallel()
	rules := func(due string, daysAfter int) domain.DueTerms {
		return dueTerms(t, func(p *domain.DueTermsParams) {
			p.Created, p.Due, p.DaysAfterDue = day("2026-02-02"), day(due), intp(daysAfter)
			p.Fine = &domain.Fine{Type: domain.FineFixed, Amount: 100}
			p.Interest = &domain.Interest{Type: domain.InterestAmountPerDay, Amount: 10}
		})
	}
	// Saturday 14 Feb 2026, Carnival's: the next business day is Ash
	// Wednesday, 18 Feb.
	sat := rules("2026-02-14", 0)
	if sat.EffectiveDue() != day("2026-02-18") || sat.LastPayableDay() != day("2026-02-18") {
		t.Fatalf("effective due %v, last day %v; want both 18 Feb", sat.EffectiveDue(), sat.LastPayableDay())
	}
	checkDue(t, sat, "2026-02-14", want{amount: 100000})
	checkDue(t, sat, "2026-02-17", want{amount: 100000})
	checkDue(t, sat, "2026-02-18", want{amount: 100000})
	if _, err := sat.AmountDue(day("2026-02-19")); !errors.Is(err, domain.ErrOverdueClosed) {
		t.Errorf("after the last day: err = %v", err)
	}
	// Carnival Tuesday, 17 Feb: due on the 18th; the 20th is 2 days late.
	tue := rules("2026-02-17", 5)
	checkDue(t, tue, "2026-02-18", want{amount: 100000})
	checkDue(t, tue, "2026-02-20", want{amount: 100120, fine: 100, interest: 20})
	// 18 + 5 = 23 Feb, a Monday: the last day.
	checkDue(t, tue, "2026-02-23", want{amount: 100150, fine: 100, interest: 50})
	if _, err := tue.AmountDue(day("2026-02-24")); !errors.Is(err, domain.ErrOverdueClosed) {
		t.Errorf("after the last day: err = %v", err)
	}
}

func TestAmountDueOutsideTheWindow(t *testing.T) {
	t.Parallel()
	terms := dueTerms(t, nil)
	if _, err := terms.AmountDue(day("2026-03-01")); !errors.Is(err, domain.ErrBeforeCreation) {
		t.Errorf("before creation: err = %v", err)
	}
	if _, err := terms.AmountDue(day("2026-05-01")); !errors.Is(err, domain.ErrOverdueClosed) {
		t.Errorf("after the last day: err = %v", err)
	}
	if _, err := terms.AmountDue(bizdays.Date{}); err == nil {
		t.Error("the zero date has an amount")
	}
	if _, err := (domain.DueTerms{}).AmountDue(day("2026-03-02")); err == nil {
		t.Error("zero DueTerms have an amount")
	}
}
