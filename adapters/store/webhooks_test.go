package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

func TestWebhooksSQLite(t *testing.T) {
	t.Parallel()
	runWebhookContract(t, func(t *testing.T) *store.DB { return openStore(t, testenv.SQLiteDSN(t)) })
}

func TestWebhooksPostgres(t *testing.T) {
	t.Parallel()
	runWebhookContract(t, func(t *testing.T) *store.DB { return openStore(t, testenv.PostgresDSN(t)) })
}

// runWebhookContract is the webhook half of the store contract.
func runWebhookContract(t *testing.T, open func(t *testing.T) *store.DB) {
	tests := []struct {
		name string
		fn   func(t *testing.T, db *store.DB)
	}{
		{"EndpointsCRUDAndScope", testEndpointsCRUD},
		{"DispatchFansOutOnce", testDispatchFansOutOnce},
		{"DispatchPayloadsFromEvents", testDispatchPayloadsFromEvents},
		{"DispatchSplitsAStatement", testDispatchSplitsAStatement},
		{"ClaimLeaseAndComplete", testClaimLeaseAndComplete},
		{"InactiveEndpointWaits", testInactiveEndpointWaits},
		{"GoneDeactivatesAndCancels", testGoneDeactivatesAndCancels},
		{"DeleteCancelsOpenDeliveries", testDeleteCancelsOpenDeliveries},
		{"ListAndStats", testListAndStats},
		{"DeliveryTotalsMatchCounts", testDeliveryTotalsMatchCounts},
		{"RequeueAndChargeFilter", testRequeueAndChargeFilter},
		{"ConcurrentClaimsNeverOverlap", testConcurrentClaimsNeverOverlap},
		{"TransactionSecret", testTransactionSecret},
		{"ClaimCapsEachEndpoint", testClaimCapsEachEndpoint},
		{"ClaimCapsEachAccount", testClaimCapsEachAccount},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, open(t))
		})
	}
}

// webhookAccount creates an account and returns its live scope.
func webhookAccount(t *testing.T, db *store.DB) ports.Scope {
	t.Helper()
	acct := domain.Account{ID: "acct_" + newRawID(t), Name: "Loja", MerchantName: "Loja", MerchantCity: "SAO PAULO",
		TransactionWebhookSecret: "txsecret", CreatedAt: baseTime}
	u := ports.User{ID: "usr_" + newRawID(t), AccountID: acct.ID, Email: newRawID(t) + "@example.com", PasswordHash: "x", CreatedAt: baseTime}
	if err := db.CreateAccount(context.Background(), acct, u, nil); err != nil {
		t.Fatal(err)
	}
	return ports.Scope{AccountID: acct.ID, Mode: domain.ModeLive}
}

func newEndpoint(t *testing.T, db *store.DB, scope ports.Scope, events ...domain.EventType) domain.WebhookEndpoint {
	t.Helper()
	e := domain.WebhookEndpoint{
		ID: domain.PrefixEndpoint + newRawID(t), AccountID: scope.AccountID, Mode: scope.Mode,
		URL: "https://hooks.example.com/" + newRawID(t), Events: events, Status: domain.EndpointActive,
		Secret: "sec-" + newRawID(t), CreatedAt: baseTime, UpdatedAt: baseTime,
	}
	if err := db.CreateEndpoint(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	return e
}

// fanAll is the dispatcher's rule in small: every subscribed endpoint of
// the event's scope, plus the charge's webhookUrl for legacy events.
func fanAll(t *testing.T, now time.Time) func(ports.OutboxBatch) ([]domain.WebhookDelivery, error) {
	return func(b ports.OutboxBatch) ([]domain.WebhookDelivery, error) {
		var out []domain.WebhookDelivery
		for _, ev := range b.Events {
			for _, ep := range b.Endpoints[ports.Scope{AccountID: ev.AccountID, Mode: ev.Mode}] {
				if ep.Subscribes(ev.Type) {
					out = append(out, domain.NewWebhookDelivery(domain.PrefixDelivery+newRawID(t), ev.Event, ep.ID, "", now))
				}
			}
			if ev.WebhookURL != "" && ev.Type.Legacy() {
				out = append(out, domain.NewWebhookDelivery(domain.PrefixDelivery+newRawID(t), ev.Event, "", ev.WebhookURL, now))
			}
		}
		return out, nil
	}
}

// seedDeliveries creates a charge with its creation events and dispatches
// them; it returns how many deliveries were made.
func seedDeliveries(t *testing.T, db *store.DB, scope ports.Scope, webhookURL string) int {
	t.Helper()
	c := newCharge(t, scope, baseTime, func(p *domain.NewChargeParams) { p.WebhookURL = webhookURL })
	mustCreate(t, db, c, chargeEvents(t, c, "", domain.CreationEvents(), baseTime), nil)
	made := 0
	fan := fanAll(t, baseTime)
	for {
		n, err := db.DispatchEvents(context.Background(), 100, func(b ports.OutboxBatch) ([]domain.WebhookDelivery, error) {
			ds, err := fan(b)
			made += len(ds)
			return ds, err
		})
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return made
		}
	}
}

func testEndpointsCRUD(t *testing.T, db *store.DB) {
	ctx := context.Background()
	scope := webhookAccount(t, db)
	testScope := ports.Scope{AccountID: scope.AccountID, Mode: domain.ModeTest}
	e := newEndpoint(t, db, scope, domain.EventChargePaid)
	newEndpoint(t, db, testScope, domain.EventChargePaid)

	got, err := db.GetEndpoint(ctx, scope, e.ID)
	if err != nil || got.URL != e.URL || got.Secret != e.Secret || len(got.Events) != 1 || got.Status != domain.EndpointActive {
		t.Fatalf("GetEndpoint: %+v, %v", got, err)
	}
	if _, err := db.GetEndpoint(ctx, testScope, e.ID); !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("endpoint visible in the other mode: %v", err)
	}
	list, err := db.ListEndpoints(ctx, scope)
	if err != nil || len(list) != 1 {
		t.Fatalf("ListEndpoints: %d, %v", len(list), err)
	}
	inactive := domain.EndpointInactive
	url := "https://other.example.com/h"
	upd, err := db.UpdateEndpoint(ctx, scope, e.ID, ports.EndpointPatch{URL: &url, Status: &inactive,
		Events: []domain.EventType{domain.EventChargePaid, domain.EventPaymentCompleted}}, baseTime.Add(time.Second))
	if err != nil || upd.URL != url || upd.Status != inactive || len(upd.Events) != 2 {
		t.Fatalf("UpdateEndpoint: %+v, %v", upd, err)
	}
	if err := db.RotateEndpointSecret(ctx, scope, e.ID, "new-secret", baseTime); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.GetEndpoint(ctx, scope, e.ID); got.Secret != "new-secret" {
		t.Fatalf("secret after rotation %q", got.Secret)
	}
	if err := db.RotateEndpointSecret(ctx, testScope, e.ID, "x", baseTime); !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("rotate out of scope: %v", err)
	}
	if err := db.DeleteEndpoint(ctx, scope, e.ID, baseTime); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteEndpoint(ctx, scope, e.ID, baseTime); !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := db.UpdateEndpoint(ctx, scope, e.ID, ports.EndpointPatch{}, baseTime); !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("update after delete: %v", err)
	}
	if list, _ := db.ListEndpoints(ctx, scope); len(list) != 0 {
		t.Fatalf("deleted endpoint still listed")
	}
}

func testGoneDeactivatesAndCancels(t *testing.T, db *store.DB) {
	ctx := context.Background()
	scope := webhookAccount(t, db)
	e := newEndpoint(t, db, scope, domain.EventChargeCreated)
	seedDeliveries(t, db, scope, "")
	seedDeliveries(t, db, scope, "")
	now := baseTime.Add(time.Second)
	claims, err := db.ClaimDeliveries(ctx, now, now.Add(time.Minute), 1, ports.ClaimCaps{})
	if err != nil || len(claims) != 1 {
		t.Fatalf("claim: %v", err)
	}
	d := claims[0].Delivery
	if err := d.RecordAttempt(domain.AttemptResult{StatusCode: 410}, domain.RetrySchedule, now, 0.5); err != nil {
		t.Fatal(err)
	}
	if err := db.CompleteDelivery(ctx, d, claims[0].LeaseToken, true); err != nil {
		t.Fatal(err)
	}
	got, _ := db.GetEndpoint(ctx, scope, e.ID)
	if got.Status != domain.EndpointInactive {
		t.Fatalf("endpoint %s after 410", got.Status)
	}
	st, _ := db.DeliveryStats(ctx, scope)
	if st[domain.DeliveryCancelled] != 2 || st[domain.DeliveryPending] != 0 {
		t.Fatalf("stats after 410: %v", st)
	}
}

func testDeleteCancelsOpenDeliveries(t *testing.T, db *store.DB) {
	ctx := context.Background()
	scope := webhookAccount(t, db)
	e := newEndpoint(t, db, scope, domain.EventChargeCreated)
	keep := newEndpoint(t, db, scope, domain.EventChargeCreated)
	seedDeliveries(t, db, scope, "")
	seedDeliveries(t, db, scope, "")
	if err := db.DeleteEndpoint(ctx, scope, e.ID, baseTime); err != nil {
		t.Fatal(err)
	}
	ds, total, _ := db.ListDeliveries(ctx, ports.DeliveryQuery{Scope: scope, EndpointID: e.ID, Limit: 10})
	if total != 2 {
		t.Fatalf("deleted endpoint's deliveries: %d", total)
	}
	for _, d := range ds {
		if d.Status != domain.DeliveryCancelled {
			t.Fatalf("delivery of a deleted endpoint is %s", d.Status)
		}
	}
	_, n, _ := db.ListDeliveries(ctx, ports.DeliveryQuery{Scope: scope, EndpointID: keep.ID, Status: domain.DeliveryPending, Limit: 10})
	if n != 2 {
		t.Fatalf("other endpoint's pending deliveries: %d", n)
	}
}

func testTransactionSecret(t *testing.T, db *store.DB) {
	ctx := context.Background()
	scope := webhookAccount(t, db)
	before, err := db.GetAccount(ctx, scope.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	test := ports.Scope{AccountID: scope.AccountID, Mode: domain.ModeTest}
	if err := db.RotateTransactionSecret(ctx, test, "rotated-test"); err != nil {
		t.Fatal(err)
	}
	a, err := db.GetAccount(ctx, scope.AccountID)
	if err != nil || a.TestTransactionWebhookSecret != "rotated-test" || a.TransactionWebhookSecret != before.TransactionWebhookSecret {
		t.Fatalf("after a test rotation: live %q test %q, %v", a.TransactionWebhookSecret, a.TestTransactionWebhookSecret, err)
	}
	live := ports.Scope{AccountID: scope.AccountID, Mode: domain.ModeLive}
	if err := db.RotateTransactionSecret(ctx, live, "rotated-live"); err != nil {
		t.Fatal(err)
	}
	a, err = db.GetAccount(ctx, scope.AccountID)
	if err != nil || a.TransactionWebhookSecret != "rotated-live" || a.TestTransactionWebhookSecret != "rotated-test" {
		t.Fatalf("after a live rotation: live %q test %q, %v", a.TransactionWebhookSecret, a.TestTransactionWebhookSecret, err)
	}
	if err := db.RotateTransactionSecret(ctx, ports.Scope{AccountID: "acct_nope", Mode: domain.ModeLive}, "x"); !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("unknown account: %v", err)
	}
}
