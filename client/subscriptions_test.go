package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/quitapix/quita/client"
	"github.com/quitapix/quita/quitatest"
)

// A subscription through the SDK, decoded strictly (every field the server
// sends has a home): created, authorised by the sandbox's payer, two
// cycles run (the first failing once, then paid on its retry), its charges
// listed with their cycles, a subscription.* event decoded, and cancelled.
func TestSubscriptionsAgainstServer(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, srv *quitatest.Server) {
		ctx := context.Background()
		qc := srv.Client(client.WithStrictDecoding())
		brasilia, err := time.LoadLocation("America/Sao_Paulo")
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now().In(brasilia).AddDate(0, 0, 5)
		sub := must(qc.Subscriptions.Create(ctx, client.SubscriptionParams{
			Customer: client.SubscriptionCustomer{Name: "Maria Silva", Document: "529.982.247-25"}, Amount: 4990,
			Interval: client.IntervalMonthly, StartDate: start.Format(time.DateOnly), Contract: "CTR-9",
			RetryPolicy: client.RetryThreeInSevenDays, Journey: client.JourneyQRCode,
		}))(t)
		if sub.Status != client.SubscriptionPendingAuthorization || sub.Pix == nil || sub.Pix.BRCode == "" || sub.HostedURL == nil ||
			sub.APIPix.Jornada != "JORNADA_2" || sub.NextCycle == nil || sub.NextCycle.Cycle != 1 {
			t.Fatalf("created %+v", sub)
		}
		if q := must(qc.Subscriptions.GetWithQRCode(ctx, sub.ID))(t); q.Pix == nil || q.Pix.QRCodeBase64 == "" {
			t.Errorf("no inline QR: %+v", q.Pix)
		}
		sub = must(qc.TestHelpers.AuthorizeSubscription(ctx, sub.ID))(t)
		if sub.Status != client.SubscriptionActive || sub.AuthorizedAt == nil {
			t.Fatalf("authorized %+v", sub)
		}
		sub = must(qc.TestHelpers.AdvanceSubscription(ctx, sub.ID, true))(t)
		if sub.LatestCycle == nil || sub.LatestCycle.Status != "retrying" || sub.LatestCycle.NextDebitDate == nil {
			t.Fatalf("failed debit %+v", sub.LatestCycle)
		}
		must(qc.TestHelpers.AdvanceSubscription(ctx, sub.ID, false))(t)
		sub = must(qc.TestHelpers.AdvanceSubscription(ctx, sub.ID, false))(t)
		if sub.Cycles.Paid != 2 || sub.LatestCycle.Cycle != 2 {
			t.Fatalf("after two cycles %+v", sub.Cycles)
		}
		var cycles []int
		for ch, err := range qc.Subscriptions.Charges(ctx, sub.ID) {
			if err != nil {
				t.Fatal(err)
			}
			if ch.Subscription == nil || ch.Subscription.Cycle == nil || ch.Status != client.ChargePaid || ch.Pix == nil || ch.Pix.BRCode != "" {
				t.Fatalf("cycle charge %+v", ch)
			}
			cycles = append(cycles, *ch.Subscription.Cycle)
		}
		if len(cycles) != 2 || cycles[0] != 2 || cycles[1] != 1 {
			t.Errorf("charges of cycles %v, want [2 1]", cycles)
		}
		found := false
		for ev, err := range qc.Events.List(ctx, client.EventListParams{Types: []string{"subscription.charge_retrying"}}) {
			if err != nil {
				t.Fatal(err)
			}
			s, err := ev.Subscription()
			if err != nil || s.ID != sub.ID || s.LatestCycle == nil || s.LatestCycle.Status != "retrying" {
				t.Fatalf("event %s: %+v %v", ev.Type, s, err)
			}
			found = true
		}
		if !found {
			t.Error("no subscription.charge_retrying event")
		}
		if _, err := qc.Subscriptions.SetNextAmount(ctx, sub.ID, 100); err == nil {
			t.Error("an amount was set on a fixed subscription")
		} else {
			apiErr(t, err, 422, "subscription_not_variable")
		}
		sub = must(qc.Subscriptions.Cancel(ctx, sub.ID))(t)
		if sub.Status != client.SubscriptionCancelled || sub.CancelledBy == nil || *sub.CancelledBy != "merchant" {
			t.Fatalf("cancelled %+v", sub)
		}
		n := 0
		for s, err := range qc.Subscriptions.List(ctx, client.SubscriptionListParams{Status: client.SubscriptionCancelled}) {
			if err != nil {
				t.Fatal(err)
			}
			if s.Customer.Document != "*********25" {
				t.Errorf("a list shows the document %q", s.Customer.Document)
			}
			n++
		}
		if n != 1 {
			t.Errorf("%d cancelled subscriptions listed", n)
		}
	})
}
