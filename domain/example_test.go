package domain_test

import (
	"fmt"
	"time"

	"github.com/quitapix/quita/domain"
)

// A charge locked to one payer's CPF is paid by that payer and credited;
// the same charge paid from someone else's account would have been returned
// to them instead. Time is an argument throughout: the domain never reads
// the clock.
func ExampleCharge_SettlePix() {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	pixFees := domain.FeeSchedule{
		Provider: domain.Fee{BPS: 50}, // 0.50 %
		Platform: domain.Fee{BPS: 49}, // 0.49 %
	}
	newLockedCharge := func() *domain.Charge {
		c, err := domain.NewCharge(domain.NewChargeParams{
			ID:            "abcdefghijklmnopqrstuvwxyz",
			AccountID:     "acct_1",
			Mode:          domain.ModeTest,
			Amount:        10_000, // R$ 100.00
			Methods:       []domain.Method{domain.MethodPix},
			Customer:      domain.Customer{Name: "Maria Silva"},
			ExpectedPayer: "529.982.247-25",
			Now:           now,
		})
		if err != nil {
			panic(err)
		}
		// The acquirer created the cob: the charge now awaits payment.
		if err := c.AttachPix(domain.PixDetails{BRCode: "000201..."}, "sandbox", "cob-1", now); err != nil {
			panic(err)
		}
		return c
	}
	pay := func(c *domain.Charge, payerTaxID string) {
		outcome, err := c.SettlePix(domain.PixPayment{
			EndToEndID: "E00000000202611221205abcdefghijk",
			Amount:     10_000,
			PayerTaxID: payerTaxID,
			PaidAt:     now.Add(5 * time.Minute),
		}, pixFees)
		if err != nil {
			fmt.Println(err)
			return
		}
		// Fees are charged only on a payment credited to the merchant.
		f := c.Fees()
		fmt.Printf("%-15s -> %s (%s), fees %s + %s\n", outcome, c.Status(), c.Status().Public(),
			domain.FormatDecimal(f.Provider), domain.FormatDecimal(f.Platform))
	}

	c := newLockedCharge()
	fmt.Println("locked to", c.ExpectedPayer(), "status", c.Status().Public())
	pay(c, "52998224725")                    // the expected payer
	pay(newLockedCharge(), "111.444.777-35") // someone else: held until the return is confirmed
	pay(newLockedCharge(), "")               // the bank did not say who paid
	// Output:
	// locked to 52998224725 status pending
	// paid            -> PAID (paid), fees 0.50 + 0.49
	// payer_mismatch  -> PROCESSING (processing), fees 0.00 + 0.00
	// held_for_review -> PROCESSING (processing), fees 0.00 + 0.00
}

// Quita stores the transaction status of the payments surface; the charges
// surface shows its public vocabulary.
func ExampleTxStatus_Public() {
	for _, s := range domain.TxStatuses {
		fmt.Printf("%-15s -> %s\n", s, s.Public())
	}
	// Output:
	// PENDING         -> pending
	// WAITING_PAYMENT -> pending
	// PROCESSING      -> processing
	// PAID            -> paid
	// APPROVED        -> paid
	// REFUSED         -> failed
	// CANCELLED       -> cancelled
	// EXPIRED         -> expired
	// REFUNDED        -> refunded
	// CHARGEBACK      -> disputed
	// DISPUTE         -> disputed
}

// Fees are basis points plus a fixed part, rounded half up to the centavo
// in integer arithmetic; the platform fee gives way so a payment never
// costs the merchant more than it brought.
func ExampleFeeSchedule_Apply() {
	card := domain.FeeSchedule{
		Provider: domain.Fee{BPS: 349, Fixed: 39}, // 3.49 % + R$ 0.39
		Platform: domain.Fee{BPS: 299},            // 2.99 %
	}
	for _, amount := range []int64{10_000, 150, 20} {
		f := card.Apply(amount)
		fmt.Printf("amount %s: provider %s, platform %s, net %s\n", domain.FormatDecimal(amount),
			domain.FormatDecimal(f.Provider), domain.FormatDecimal(f.Platform), domain.FormatDecimal(f.Net(amount)))
	}
	// Output:
	// amount 100.00: provider 3.88, platform 2.99, net 93.13
	// amount 1.50: provider 0.44, platform 0.04, net 1.02
	// amount 0.20: provider 0.20, platform 0.00, net 0.00
}
