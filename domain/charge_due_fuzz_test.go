package domain_test

import (
	"errors"
	"reflect"
	"slices"
	"testing"

	"github.com/quitapix/quita/domain"
)

// fuzzDue is one fuzzer input turned into terms' parameters: every kind
// number picks a rule type or none, every offset a day from creation.
type fuzzDue struct {
	original                   int64
	createdOff, dueOff         uint16
	daysAfter                  int16
	fineKind, interestKind     uint8
	fineAmount, interestAmount int64
	fineRate, interestRate     string
	discountKind               uint8
	discountAmount             int64
	discountRate               string
	discountBusiness           bool
	tiers                      uint8
	abatementKind              uint8
	abatementAmount            int64
	abatementRate              string
}

func (in fuzzDue) params() domain.DueTermsParams {
	created := day("2026-01-01").AddDays(int(in.createdOff % 4000))
	days := int(in.daysAfter)
	p := domain.DueTermsParams{
		Original: in.original, Created: created, Due: created.AddDays(int(in.dueOff % 3700)), DaysAfterDue: &days,
	}
	switch in.fineKind % 3 {
	case 1:
		p.Fine = &domain.Fine{Type: domain.FineFixed, Amount: in.fineAmount}
	case 2:
		p.Fine = &domain.Fine{Type: domain.FinePercent, Rate: in.fineRate}
	}
	if k := in.interestKind % 9; k > 0 {
		types := []domain.InterestType{domain.InterestAmountPerDay, domain.InterestPercentPerDay, domain.InterestPercentPerMonth, domain.InterestPercentPerYear}
		i := &domain.Interest{Type: types[(k-1)%4], BusinessDays: k > 4}
		if i.Type == domain.InterestAmountPerDay {
			i.Amount = in.interestAmount
		} else {
			i.Rate = in.interestRate
		}
		p.Interest = i
	}
	switch in.discountKind % 5 {
	case 1, 2:
		d := &domain.Discount{Type: domain.DiscountFixedUntil}
		if in.discountKind%5 == 2 {
			d.Type = domain.DiscountPercentUntil
		}
		// Up to four tiers, spread over the days to the due date.
		n := int(in.tiers % 5)
		for i := range n {
			u := domain.DiscountUntil{Date: created.AddDays(int(in.dueOff%3700) * (i + 1) / max(n, 1))}
			if d.Type == domain.DiscountFixedUntil {
				u.Amount = in.discountAmount / int64(i+1)
			} else {
				u.Rate = in.discountRate
			}
			d.Until = append(d.Until, u)
		}
		p.Discount = d
	case 3:
		p.Discount = &domain.Discount{Type: domain.DiscountAmountPerDayBefore, Amount: in.discountAmount, BusinessDays: in.discountBusiness}
	case 4:
		p.Discount = &domain.Discount{Type: domain.DiscountPercentPerDayBefore, Rate: in.discountRate, BusinessDays: in.discountBusiness}
	}
	switch in.abatementKind % 3 {
	case 1:
		p.Abatement = &domain.Abatement{Type: domain.AbatementFixed, Amount: in.abatementAmount}
	case 2:
		p.Abatement = &domain.Abatement{Type: domain.AbatementPercent, Rate: in.abatementRate}
	}
	return p
}

// FuzzAmountDue: whatever NewDueTerms accepts, AmountDue never panics, and
// on every payable day 1 ≤ amount due ≤ original + fine + interest, the
// parts add up, a discount never meets a fine or interest, and paying a day
// later never costs less once the due date has passed. What NewDueTerms
// refuses, it refuses with a ValidationError naming a known Field.
func FuzzAmountDue(f *testing.F) {
	f.Add(int64(100000), uint16(0), uint16(29), int16(30), uint8(2), int64(0), "2.00", uint8(3), int64(0), "1.00",
		uint8(1), int64(3000), "5.00", false, uint8(3), uint8(2), int64(0), "10.00", int16(40))
	f.Add(int64(12345), uint16(40), uint16(45), int16(0), uint8(1), int64(500), "", uint8(5), int64(33), "",
		uint8(4), int64(0), "0.10", true, uint8(0), uint8(1), int64(100), "", int16(44))
	f.Add(int64(1), uint16(3000), uint16(3650), int16(3650), uint8(2), int64(0), "1000.00", uint8(8), int64(0), "1000.00",
		uint8(3), int64(0), "", false, uint8(0), uint8(0), int64(0), "", int16(7300))
	f.Add(domain.MaxAmount, uint16(100), uint16(3650), int16(3650), uint8(2), int64(0), "1000.00", uint8(2), int64(0), "1000.00",
		uint8(0), int64(0), "", false, uint8(0), uint8(2), int64(0), "99.99", int16(7303))
	f.Fuzz(func(t *testing.T, original int64, createdOff, dueOff uint16, daysAfter int16,
		fineKind uint8, fineAmount int64, fineRate string, interestKind uint8, interestAmount int64, interestRate string,
		discountKind uint8, discountAmount int64, discountRate string, discountBusiness bool, tiers uint8,
		abatementKind uint8, abatementAmount int64, abatementRate string, onOff int16) {
		in := fuzzDue{original, createdOff, dueOff, daysAfter, fineKind, interestKind, fineAmount, interestAmount,
			fineRate, interestRate, discountKind, discountAmount, discountRate, discountBusiness, tiers,
			abatementKind, abatementAmount, abatementRate}
		p := in.params()
		terms, err := domain.NewDueTerms(p)
		if err != nil {
			var ve *domain.ValidationError
			if !errors.As(err, &ve) || !slices.Contains(domain.Fields, ve.Field) {
				t.Fatalf("NewDueTerms(%+v) = %v, want a ValidationError naming a Field", p, err)
			}
			return
		}
		if again, err := domain.NewDueTerms(terms.Params()); err != nil || !reflect.DeepEqual(again, terms) {
			t.Fatalf("NewDueTerms(Params()) = %v; terms changed", err)
		}
		on := p.Created.AddDays(int(onOff))
		b, err := terms.AmountDue(on)
		switch {
		case on.Before(p.Created):
			if !errors.Is(err, domain.ErrBeforeCreation) {
				t.Fatalf("AmountDue(%v) before creation = %v", on, err)
			}
			return
		case on.After(terms.LastPayableDay()):
			if !errors.Is(err, domain.ErrOverdueClosed) {
				t.Fatalf("AmountDue(%v) after the last day = %v", on, err)
			}
			return
		case err != nil:
			t.Fatalf("AmountDue(%v) = %v", on, err)
		}
		checkBreakdown(t, terms, b)
		if next := on.AddDays(1); on.After(terms.EffectiveDue()) && !next.After(terms.LastPayableDay()) {
			nb, err := terms.AmountDue(next)
			if err != nil || nb.AmountDue < b.AmountDue {
				t.Fatalf("a day later (%v) = %+v, %v; was %+v", next, nb, err, b)
			}
		}
	})
}

func checkBreakdown(t *testing.T, terms domain.DueTerms, b domain.DueBreakdown) {
	t.Helper()
	if b.Fine < 0 || b.Interest < 0 || b.Discount < 0 || b.Abatement < 0 || b.Abatement >= b.Original {
		t.Fatalf("a negative part, or an abatement of the whole: %+v", b)
	}
	if b.AmountDue < 1 || b.AmountDue > b.Original+b.Fine+b.Interest {
		t.Fatalf("amount due out of [1, original + fine + interest]: %+v", b)
	}
	if b.AmountDue != b.Original-b.Abatement-b.Discount+b.Fine+b.Interest {
		t.Fatalf("parts do not add up: %+v", b)
	}
	if b.Discount != 0 && b.Fine+b.Interest != 0 {
		t.Fatalf("a discount together with a fine or interest: %+v", b)
	}
	if !b.Date.After(terms.EffectiveDue()) && b.Fine+b.Interest != 0 {
		t.Fatalf("fine or interest on or before the due date: %+v", b)
	}
}
