package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// testDeliveryTotalsMatchCounts: the deliveries list's total and the
// stats, read from delivery_counts and the undelivered index, equal a
// COUNT of the deliveries for every filter, after creates and their
// fan-out, attempts that deliver, fail and retry, cancellations, a
// resend, the events' retention (which leaves deliveries alone) and a
// delete of deliveries; the counter rows of a scope sum to its
// deliveries.
func testDeliveryTotalsMatchCounts(t *testing.T, db *store.DB) {
	ctx := context.Background()
	scope := webhookAccount(t, db)
	other := webhookAccount(t, db)
	a := newEndpoint(t, db, scope, domain.EventChargeCreated, domain.EventPaymentCreated)
	b := newEndpoint(t, db, scope, domain.EventChargeCreated)
	newEndpoint(t, db, other, domain.EventChargeCreated)
	test := ports.Scope{AccountID: scope.AccountID, Mode: domain.ModeTest}
	newEndpoint(t, db, test, domain.EventChargeCreated)
	check := func(step string) {
		t.Helper()
		for _, s := range []ports.Scope{scope, other, test} {
			checkDeliveryTotals(t, db, step, s, []string{"", a.ID, b.ID})
		}
	}
	check("empty")
	for range 3 {
		seedDeliveries(t, db, scope, "https://merchant.example.com/tx")
		seedDeliveries(t, db, other, "")
		seedDeliveries(t, db, test, "")
	}
	check("fan-out")

	now := baseTime.Add(time.Second)
	claims, err := db.ClaimDeliveries(ctx, now, now.Add(time.Minute), 100, ports.ClaimCaps{})
	if err != nil || len(claims) < 10 {
		t.Fatalf("claims %d, %v", len(claims), err)
	}
	check("claimed")
	for i, c := range claims {
		d := c.Delivery
		r := domain.AttemptResult{StatusCode: []int{200, 500, 200}[i%3]}
		if i%5 == 4 {
			r = domain.AttemptResult{StatusCode: 400, Permanent: true} // FAILED
		}
		if err := d.RecordAttempt(r, domain.RetrySchedule, now, 0.5); err != nil {
			t.Fatal(err)
		}
		if err := db.CompleteDelivery(ctx, d, c.LeaseToken, false); err != nil {
			t.Fatal(err)
		}
	}
	check("attempted")
	for _, c := range claims[:2] {
		if c.Delivery.AccountID == scope.AccountID && c.Delivery.Mode == scope.Mode {
			if _, err := db.RequeueDelivery(ctx, scope, c.Delivery.ID, now.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
	}
	check("resent")
	if err := db.DeleteEndpoint(ctx, scope, b.ID, now.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	check("cancelled")
	if _, err := db.DeleteEventsBefore(ctx, baseTime.Add(time.Hour), 1000); err != nil {
		t.Fatal(err)
	}
	seedDeliveries(t, db, scope, "https://merchant.example.com/tx")
	check("retention and more")
	// No code deletes deliveries; a statement that does takes them out of
	// the counts in its own transaction.
	if _, err := db.Bun().NewDelete().TableExpr("webhook_deliveries").Where("account_id = ?", scope.AccountID).
		Where("endpoint_id = ?", a.ID).Where("status <> 'PENDING'").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	check("deleted")
}

// checkDeliveryTotals compares, for each status (and none), event type
// (and none) and endpoint, the list's total with a COUNT of the rows;
// the stats with a COUNT per status; and the counter rows with the rows.
func checkDeliveryTotals(t *testing.T, db *store.DB, step string, s ports.Scope, endpoints []string) {
	t.Helper()
	ctx := context.Background()
	count := func(status domain.DeliveryStatus, typ domain.EventType, endpoint string) int {
		q := db.Bun().NewSelect().TableExpr("webhook_deliveries").Where("account_id = ?", s.AccountID).Where("mode = ?", string(s.Mode))
		if status != "" {
			q = q.Where("status = ?", string(status))
		}
		if typ != "" {
			q = q.Where("event_type = ?", string(typ))
		}
		if endpoint != "" {
			q = q.Where("endpoint_id = ?", endpoint)
		}
		n, err := q.Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return int(n)
	}
	for _, status := range append([]domain.DeliveryStatus{""}, domain.DeliveryStatuses...) {
		for _, typ := range []domain.EventType{"", domain.EventChargeCreated, domain.EventPaymentCreated} {
			for _, ep := range endpoints {
				_, total, err := db.ListDeliveries(ctx, ports.DeliveryQuery{Scope: s, Status: status, EventType: typ, EndpointID: ep, Limit: 1})
				if err != nil {
					t.Fatal(err)
				}
				if want := count(status, typ, ep); total != want {
					t.Errorf("%s: %s/%s total with status %q, type %q, endpoint %q = %d, COUNT %d",
						step, s.AccountID, s.Mode, status, typ, ep, total, want)
				}
			}
		}
	}
	st, err := db.DeliveryStats(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, status := range domain.DeliveryStatuses {
		if want := count(status, "", ""); st[status] != want {
			t.Errorf("%s: %s/%s stats %s = %d, COUNT %d", step, s.AccountID, s.Mode, status, st[status], want)
		}
	}
	var counted int
	if err := db.Bun().NewSelect().TableExpr("delivery_counts").ColumnExpr("COALESCE(SUM(n), 0)").
		Where("account_id = ?", s.AccountID).Where("mode = ?", string(s.Mode)).Scan(ctx, &counted); err != nil {
		t.Fatal(err)
	}
	if want := count("", "", ""); counted != want {
		t.Errorf("%s: %s/%s delivery_counts sum to %d, COUNT %d", step, s.AccountID, s.Mode, counted, want)
	}
}
