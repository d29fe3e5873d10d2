package quitatest_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	quitaapp "github.com/quitapix/quita/app"
	"github.com/quitapix/quita/client"
	"github.com/quitapix/quita/quitatest"
)

// shop is a merchant's code under test: it fulfils an order when its
// charge is paid, verifying the webhook with the SDK.
type shop struct {
	secret    string
	mu        sync.Mutex
	fulfilled map[string]bool
}

func (s *shop) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ev, err := client.ParseWebhook(r, s.secret)
	if err != nil {
		http.Error(w, "invalid signature", http.StatusBadRequest)
		return
	}
	if ev.Type == client.EventChargePaid {
		ch, err := ev.Charge()
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.fulfilled[ch.ID] = true
		s.mu.Unlock()
	}
	w.WriteHeader(http.StatusNoContent)
}

// A merchant's unit test reads: create charge → pay → assert the webhook
// their handler received.
func TestMerchantFlowThroughTheSDK(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := quitatest.NewServer(t, quitatest.Options{})
	qc := srv.Client()

	hook := srv.NewReceiver(t, qc, client.EventChargePaid, client.EventChargeExpired)
	app := &shop{secret: hook.Endpoint.Secret, fulfilled: map[string]bool{}}
	hook.Handle(app)

	ch, err := qc.Charges.Create(ctx, client.ChargeParams{Amount: 1990, Customer: &client.Customer{Name: "Maria"}, ExpectedPayerTaxID: "52998224725"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := qc.TestHelpers.PayCharge(ctx, ch.ID, client.PayParams{PayerDocument: "52998224725"}); err != nil {
		t.Fatal(err)
	}
	d := hook.Wait(t, client.EventChargePaid, ch.ID)
	if d.Status != http.StatusNoContent || d.VerifyErr != nil || !app.fulfilled[ch.ID] {
		t.Fatalf("handler answered %d (verify %v), fulfilled %v", d.Status, d.VerifyErr, app.fulfilled)
	}

	// Moving the clock past expires_at and the expiry grace (a Pix paid in
	// time may still be reported until then) expires an unpaid charge and
	// delivers charge.expired.
	late, err := qc.Charges.Create(ctx, client.ChargeParams{Amount: 500, ExpiresIn: 60})
	if err != nil {
		t.Fatal(err)
	}
	srv.Advance(t, 61*time.Second)
	for _, d := range hook.Deliveries() {
		if d.Event.Type == client.EventChargeExpired {
			t.Fatal("charge.expired sent inside the expiry grace")
		}
	}
	srv.Advance(t, quitaapp.DefaultExpiryGrace)
	if d := hook.Wait(t, client.EventChargeExpired, late.ID); d.Status != http.StatusNoContent || app.fulfilled[late.ID] {
		t.Fatalf("expired: %d, fulfilled %v", d.Status, app.fulfilled)
	}
	// Only subscribed events reached the handler, each verified.
	for _, d := range hook.Deliveries() {
		if d.VerifyErr != nil || (d.Event.Type != client.EventChargePaid && d.Event.Type != client.EventChargeExpired) {
			t.Fatalf("delivery %s: %v", d.Event.Type, d.VerifyErr)
		}
	}

	// A refund's life: PENDING, then the refund worker finishes it; a
	// second one is failed by the test helper.
	if _, err := qc.Payments.Refund(ctx, ch.ID, client.RefundParams{Amount: 990}); err != nil {
		t.Fatal(err)
	}
	srv.RunWorkers(t)
	rf2, err := qc.Payments.Refund(ctx, ch.ID, client.RefundParams{Amount: 500})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := qc.TestHelpers.FailRefund(ctx, rf2.ID); err != nil {
		t.Fatal(err)
	}
	rs, err := qc.Payments.Refunds(ctx, ch.ID)
	if err != nil || len(rs) != 2 || rs[0].Status != client.RefundFailed || rs[1].Status != client.RefundRefunded {
		t.Fatalf("refunds %v %v", rs, err)
	}
}

// The default account and its client are made once; other accounts get
// their own clients, isolated from it.
func TestServerClients(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := quitatest.NewServer(t, quitatest.Options{})
	first := srv.Account()
	if again := srv.Account(); again.AccountID != first.AccountID || again.TestKey != first.TestKey {
		t.Fatal("the default account changed")
	}
	ch, err := srv.Client().Charges.Create(ctx, client.ChargeParams{Amount: 100})
	if err != nil {
		t.Fatal(err)
	}
	other := srv.ClientFor(srv.NewAccount(t, "Outra Loja"))
	if _, err := other.Charges.Get(ctx, ch.ID); !errors.Is(err, client.ErrNotFound) {
		t.Fatalf("another account reads the charge: %v", err)
	}
	keys, err := srv.DashboardClient(t, srv.Account()).APIKeys.List(ctx)
	if err != nil || len(keys) != 2 {
		t.Fatalf("dashboard keys %v %v", keys, err)
	}
}
