package domain_test

import (
	"fmt"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

// A school fee of R$ 500.00 due on Carnival Tuesday: the due date moves to
// Ash Wednesday, 5 % off until the 10th, a 2 % fine and 1 % a month after.
func ExampleDueTerms_AmountDue() {
	terms, err := domain.NewDueTerms(domain.DueTermsParams{
		Original: 50000,
		Created:  bizdays.MustDate(2026, 2, 2),
		Due:      bizdays.MustDate(2026, 2, 17),
		Fine:     &domain.Fine{Type: domain.FinePercent, Rate: "2.00"},
		Interest: &domain.Interest{Type: domain.InterestPercentPerMonth, Rate: "1.00"},
		Discount: &domain.Discount{Type: domain.DiscountPercentUntil, Until: []domain.DiscountUntil{
			{Date: bizdays.MustDate(2026, 2, 10), Rate: "5.00"},
		}},
	})
	if err != nil {
		panic(err)
	}
	show := func(d bizdays.Date) string { return fmt.Sprintf("%.3s %d %.3s", d.Weekday(), d.Day(), d.Month()) }
	fmt.Println("due", show(terms.EffectiveDue()), "payable until", show(terms.LastPayableDay()))
	for _, on := range []bizdays.Date{
		bizdays.MustDate(2026, 2, 10), bizdays.MustDate(2026, 2, 18), bizdays.MustDate(2026, 3, 20),
	} {
		b, _ := terms.AmountDue(on)
		fmt.Printf("%s: %s (discount %s, fine %s, interest %s)\n", show(on), domain.FormatDecimal(b.AmountDue),
			domain.FormatDecimal(b.Discount), domain.FormatDecimal(b.Fine), domain.FormatDecimal(b.Interest))
	}
	// Output:
	// due Wed 18 Feb payable until Fri 20 Mar
	// Tue 10 Feb: 475.00 (discount 25.00, fine 0.00, interest 0.00)
	// Wed 18 Feb: 500.00 (discount 0.00, fine 0.00, interest 0.00)
	// Fri 20 Mar: 515.00 (discount 0.00, fine 10.00, interest 5.00)
}
