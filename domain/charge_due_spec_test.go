package domain_test

import (
	"errors"
	"testing"

	"github.com/quitapix/quita/domain"
)

// The API Pix 2.9's own worked examples for cobv, from the description of
// calendario.validadeAposVencimento (Exemplos A to G): which days a charge
// is still accepted on. The due date moves to the next business day, the
// days after due are counted in calendar days from the moved date, and a
// last day that falls on a weekend or holiday moves to the next business
// day too (A: 20 Oct + 4 is Saturday 24 Oct, accepted until Monday 26 Oct).
//
// The spec's list of CobPayloadOperacaoInvalida violations gives one more
// example that does not agree with these: due 25 Dec 2020 (a holiday),
// validadeAposVencimento 10, and a payment on 5 Jan 2021 refused. Counting
// as Exemplos B to E do (from Monday 28 Dec) gives 7 Jan 2021 as the last
// day; that example counts from the unmoved 25 Dec. Quita follows Exemplos
// A to G, the detailed statement of the rule, and the last case below
// pins the consequence.
func TestLastPayableDayFollowsTheAPIPixExamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		example        string
		due            string
		daysAfterDue   int
		effectiveDue   string
		lastPayableDay string
	}{
		{"A", "2020-10-20", 4, "2020-10-20", "2020-10-26"},
		{"B", "2020-12-25", 0, "2020-12-28", "2020-12-28"},
		{"C", "2020-12-25", 1, "2020-12-28", "2020-12-29"},
		{"D", "2020-12-25", 3, "2020-12-28", "2020-12-31"},
		{"E", "2020-12-25", 4, "2020-12-28", "2021-01-04"},
		{"F", "2021-08-27", 5, "2021-08-27", "2021-09-01"},
		{"G", "2021-08-28", 5, "2021-08-30", "2021-09-06"},
		{"violations list (see above)", "2020-12-25", 10, "2020-12-28", "2021-01-07"},
	}
	for _, tt := range tests {
		t.Run(tt.example, func(t *testing.T) {
			t.Parallel()
			terms := dueTerms(t, func(p *domain.DueTermsParams) {
				p.Created, p.Due, p.DaysAfterDue = day(tt.due), day(tt.due), intp(tt.daysAfterDue)
			})
			if got := terms.EffectiveDue(); got != day(tt.effectiveDue) {
				t.Errorf("EffectiveDue = %v, want %s", got, tt.effectiveDue)
			}
			if got := terms.LastPayableDay(); got != day(tt.lastPayableDay) {
				t.Errorf("LastPayableDay = %v, want %s", got, tt.lastPayableDay)
			}
			// Every day from the due date to the last is accepted ("aceito"),
			// the day after is refused ("negado").
			last := day(tt.lastPayableDay)
			for d := day(tt.due); !d.After(last); d = d.AddDays(1) {
				if _, err := terms.AmountDue(d); err != nil {
					t.Errorf("AmountDue(%v) = %v, want accepted", d, err)
				}
			}
			if _, err := terms.AmountDue(last.AddDays(1)); !errors.Is(err, domain.ErrOverdueClosed) {
				t.Errorf("AmountDue(%v) = %v, want ErrOverdueClosed", last.AddDays(1), err)
			}
		})
	}
}

// The API Pix's example request for PUT /cobv/{txid} (cobBody1): R$ 123.45
// due 31 Dec 2020, 30 days after, multa modalidade 2 (15.00 %), juros
// modalidade 2 (2.00 % a day), desconto modalidade 1 with R$ 30.00 until
// 30 Nov 2020. The spec states no amount for it; the amounts below are
// Quita's arithmetic on it, not the Banco Central's. (Its payload example,
// cobPayload2, shows multa 15.00 and juros 2.00 as amounts on the same
// original and final 140.45 = 123.45 + 15.00 + 2.00: it is not this
// request's result, since 15 % of 123.45 is 18.51.)
func TestTheAPIPixExampleRequest(t *testing.T) {
	t.Parallel()
	terms := dueTerms(t, func(p *domain.DueTermsParams) {
		p.Original, p.Created, p.Due, p.DaysAfterDue = 12345, day("2020-09-15"), day("2020-12-31"), intp(30)
		p.Fine = &domain.Fine{Type: domain.FinePercent, Rate: "15.00"}
		p.Interest = &domain.Interest{Type: domain.InterestPercentPerDay, Rate: "2.00"}
		p.Discount = &domain.Discount{Type: domain.DiscountFixedUntil, Until: []domain.DiscountUntil{{Date: day("2020-11-30"), Amount: 3000}}}
	})
	checkDue(t, terms, "2020-11-30", want{amount: 9345, discount: 3000})
	checkDue(t, terms, "2020-12-31", want{amount: 12345})
	// 4 days late: fine ⌊12345 × 1500 / 10000⌋ = ⌊1851.75⌋; interest
	// ⌊12345 × 200 × 4 / 10000⌋ = ⌊987.6⌋.
	checkDue(t, terms, "2021-01-04", want{amount: 12345 + 1851 + 987, fine: 1851, interest: 987})
	// 31 Dec + 30 = 30 Jan 2021, a Saturday: payable until Monday 1 Feb.
	if got := terms.LastPayableDay(); got != day("2021-02-01") {
		t.Errorf("LastPayableDay = %v, want 1 Feb 2021", got)
	}
}
