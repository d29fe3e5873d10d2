package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/quitapix/quita/client"
	"github.com/quitapix/quita/quitatest"
)

// A due-date charge through the SDK: created with its rules (strict
// decoding: every field the server sends has a home), its amount due read
// for a late day, paid that day for that amount, and shown paid with its
// parts.
func TestDueDateChargeAgainstServer(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, srv *quitatest.Server) {
		ctx := context.Background()
		qc := srv.Client(client.WithStrictDecoding())
		brasilia, err := time.LoadLocation("America/Sao_Paulo")
		if err != nil {
			t.Fatal(err)
		}
		due := time.Now().In(brasilia).AddDate(0, 0, 20)
		for due.Weekday() == time.Saturday || due.Weekday() == time.Sunday {
			due = due.AddDate(0, 0, 1)
		}
		ch := must(qc.Charges.Create(ctx, client.ChargeParams{
			Amount: 10000, Customer: &client.Customer{Name: "Maria Silva", Document: "529.982.247-25"},
			DueDate: due.Format(time.DateOnly), Fine: &client.DueFine{Type: "fixed", Amount: 200},
			Interest: &client.DueInterest{Type: "amount_per_day", Amount: 10},
		}))(t)
		if ch.DueDate != due.Format(time.DateOnly) || ch.DaysAfterDue != 30 || ch.Fine == nil || ch.Fine.Amount != 200 || ch.Paid != nil {
			t.Fatalf("created %+v", ch)
		}
		late := due.AddDate(0, 0, 5).Format(time.DateOnly)
		amt := must(qc.Charges.AmountDue(ctx, ch.ID, late))(t)
		if amt.AmountDue != 10250 || amt.Fine != 200 || amt.Interest != 50 || amt.Date != late {
			t.Fatalf("amount due on %s: %+v, want 102.50 (fine 2.00, interest 5 × 0.10)", late, amt)
		}
		paid := must(qc.TestHelpers.PayCharge(ctx, ch.ID, client.PayParams{Date: late}))(t)
		if paid.Status != client.ChargePaid || paid.Paid == nil || paid.Paid.Amount != 10250 || paid.Paid.Date != late {
			t.Fatalf("paid %+v", paid)
		}
		if _, err := qc.Charges.AmountDue(ctx, ch.ID, due.AddDate(0, 0, 40).Format(time.DateOnly)); err == nil {
			t.Error("an amount due after the last payable day was answered")
		} else {
			apiErr(t, err, 422, "charge_overdue_closed")
		}
	})
}
