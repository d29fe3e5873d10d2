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

// A due-date charge's terms revised through the SDK: the due date moved,
// the fine replaced and the interest removed (sent as null); the charge
// and its amount due follow; the same key replays the first answer; an
// immediate charge is refused with charge_not_due_date; a removal the
// server would not understand never leaves the client.
func TestChargeUpdateAgainstServer(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, srv *quitatest.Server) {
		ctx := context.Background()
		qc := srv.Client(client.WithStrictDecoding())
		brasilia, err := time.LoadLocation("America/Sao_Paulo")
		if err != nil {
			t.Fatal(err)
		}
		weekday := func(d time.Time) time.Time {
			for d.Weekday() == time.Saturday || d.Weekday() == time.Sunday {
				d = d.AddDate(0, 0, 1)
			}
			return d
		}
		today := time.Now().In(brasilia)
		due, later := weekday(today.AddDate(0, 0, 10)), weekday(today.AddDate(0, 0, 20))
		ch := must(qc.Charges.Create(ctx, client.ChargeParams{
			Amount: 10000, Customer: &client.Customer{Name: "Maria Silva", Document: "529.982.247-25"},
			DueDate: due.Format(time.DateOnly), Fine: &client.DueFine{Type: "fixed", Amount: 200},
			Interest: &client.DueInterest{Type: "amount_per_day", Amount: 10},
		}))(t)
		p := client.ChargeUpdateParams{DueDate: later.Format(time.DateOnly), Fine: &client.DueFine{Type: "percent", Rate: "3.00"},
			Remove: []string{"interest"}, IdempotencyKey: "sdk-revise-0001"}
		got := must(qc.Charges.Update(ctx, ch.ID, p))(t)
		if got.DueDate != later.Format(time.DateOnly) || got.Fine == nil || got.Fine.Rate != "3.00" || got.Interest != nil ||
			got.Pix == nil || !got.Pix.ExpiresAt.After(ch.Pix.ExpiresAt) {
			t.Fatalf("revised %+v", got)
		}
		late := later.AddDate(0, 0, 5).Format(time.DateOnly) // late even if a holiday moves the due date
		if amt := must(qc.Charges.AmountDue(ctx, ch.ID, late))(t); amt.AmountDue != 10300 || amt.Interest != 0 {
			t.Errorf("amount due on %s: %+v, want 103.00 (a 3 %% fine, no interest)", late, amt)
		}
		again := must(qc.Charges.Update(ctx, ch.ID, p))(t)
		if again.DueDate != got.DueDate || again.Fine.Rate != "3.00" {
			t.Errorf("the same revision again: %+v", again)
		}
		other := p
		other.Fine = &client.DueFine{Type: "fixed", Amount: 100}
		if _, err := qc.Charges.Update(ctx, ch.ID, other); err == nil {
			t.Error("the key reused for another revision was accepted")
		} else {
			apiErr(t, err, 409, "idempotency_key_reused")
		}

		plain := must(qc.Charges.Create(ctx, client.ChargeParams{Amount: 500}))(t)
		if _, err := qc.Charges.Update(ctx, plain.ID, client.ChargeUpdateParams{DaysAfterDue: new(int)}); err == nil {
			t.Error("an immediate charge was revised")
		} else {
			apiErr(t, err, 422, "charge_not_due_date")
		}
		if _, err := qc.Charges.Update(ctx, ch.ID, client.ChargeUpdateParams{Remove: []string{"amount"}}); err == nil {
			t.Error("Remove of something that is not a rule was sent")
		}
		if _, err := qc.Charges.Update(ctx, ch.ID, client.ChargeUpdateParams{Fine: &client.DueFine{Type: "fixed", Amount: 1}, Remove: []string{"fine"}}); err == nil {
			t.Error("a rule both set and removed was sent")
		}
	})
}
