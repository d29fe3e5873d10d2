package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/client"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/quitatest"
)

// backends are the server configurations every SDK test runs on: the
// embedded SQLite database with in-process idempotency, and Postgres with
// the Redis idempotency cache.
var backends = []struct {
	name string
	opts func(testing.TB) quitatest.Options
}{
	{"sqlite", func(t testing.TB) quitatest.Options {
		return quitatest.Options{DatabaseURL: testenv.SQLiteDSN(t)}
	}},
	{"postgres+redis", func(t testing.TB) quitatest.Options {
		redisURL, prefix := testenv.RedisURL(t)
		return quitatest.Options{DatabaseURL: testenv.PostgresDSN(t), RedisURL: redisURL, RedisPrefix: prefix}
	}},
}

// eachBackend runs f on a fresh server of every backend.
func eachBackend(t *testing.T, f func(t *testing.T, srv *quitatest.Server)) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			f(t, quitatest.NewServer(t, b.opts(t)))
		})
	}
}

// must fails the test on err: must(call(...))(t).
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// apiErr asserts err is an *Error with this status and code, and that it
// carries a request id.
func apiErr(t *testing.T, err error, status int, code string) *client.Error {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want a *client.Error %d %s", err, status, code)
	}
	if e.HTTPStatus != status || e.Code != code || !strings.HasPrefix(e.RequestID, "req_") || e.Type == "" || e.Message == "" {
		t.Fatalf("got %+v, want %d %s with a request id", e, status, code)
	}
	return e
}

const payer = "52998224725" // a valid CPF

func TestChargesAgainstServer(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, srv *quitatest.Server) {
		ctx := context.Background()
		qc := srv.Client(client.WithStrictDecoding())

		p := client.ChargeParams{
			Amount: 1990, Description: "Pedido 1001", ExpiresIn: 600,
			Customer:           &client.Customer{Name: "Maria Silva", Email: "maria@example.com"},
			ExpectedPayerTaxID: "529.982.247-25", Metadata: map[string]any{"order": 1001},
			IdempotencyKey: "order-1001-attempt",
		}
		ch, resp := func() (*client.Charge, *client.Response) {
			ch, resp, err := qc.Charges.CreateWithResponse(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			return ch, resp
		}()
		raw := strings.TrimPrefix(ch.ID, "ch_")
		if !strings.HasPrefix(ch.ID, "ch_") || ch.Object != "charge" || ch.Status != client.ChargePending || ch.Amount != 1990 ||
			ch.Currency != "BRL" || ch.PaymentMethod != "pix" || ch.Pix == nil || ch.Pix.BRCode == "" || ch.Pix.QRCodeURL == "" ||
			!strings.HasSuffix(ch.CheckoutURL, "/"+raw) || ch.Metadata["description"] != "Pedido 1001" ||
			fmt.Sprint(ch.Metadata["order"]) != "1001" || ch.ExpectedPayerTaxID == "" || ch.Customer.Name != "Maria Silva" ||
			ch.Settlement.EndToEndID != "" || resp.StatusCode != http.StatusCreated || resp.Replayed || !strings.HasPrefix(resp.RequestID, "req_") {
			t.Fatalf("created %+v (%+v)", ch, resp)
		}
		if d := time.Until(ch.Pix.ExpiresAt); d < 9*time.Minute || d > 11*time.Minute {
			t.Fatalf("expires in %v, want about 10 min", d)
		}

		// The same key and body: the original charge, marked replayed.
		again, resp, err := qc.Charges.CreateWithResponse(ctx, p)
		if err != nil || again.ID != ch.ID || !resp.Replayed {
			t.Fatalf("replay %+v %+v %v", again, resp, err)
		}
		// The same key, another body: a typed 409.
		p2 := p
		p2.Amount = 2000
		_, err = qc.Charges.Create(ctx, p2)
		if e := apiErr(t, err, 409, "idempotency_key_reused"); !errors.Is(e, client.ErrIdempotencyKeyReused) {
			t.Fatal("not ErrIdempotencyKeyReused")
		}
		// Validation names the parameter.
		_, err = qc.Charges.Create(ctx, client.ChargeParams{Amount: 100, Customer: &client.Customer{Name: "Ana"}, ExpectedPayerTaxID: "123"})
		if e := apiErr(t, err, 400, "parameter_invalid"); e.Param == "" || !errors.Is(e, client.ErrInvalidRequest) {
			t.Fatalf("param %q", e.Param)
		}
		_, err = qc.Charges.Get(ctx, "ch_doesnotexist0000")
		if apiErr(t, err, 404, "resource_not_found"); !errors.Is(err, client.ErrNotFound) {
			t.Fatal("not ErrNotFound")
		}
		// A bad key is a typed 401.
		_, err = client.New(srv.BaseURL, "qt_test_nope").Charges.Get(ctx, ch.ID)
		if !errors.Is(err, client.ErrUnauthorized) {
			t.Fatalf("bad key: %v", err)
		}

		got := must(qc.Charges.Get(ctx, ch.ID, client.GetOptions{IncludeQRCode: true}))(t)
		if got.ID != ch.ID || got.Pix == nil || got.Pix.QRCodeBase64 == "" || got.Pix.BRCode != ch.Pix.BRCode {
			t.Fatalf("get %+v", got)
		}

		// The sandbox bank pays with the expected payer's document.
		paid := must(qc.TestHelpers.PayCharge(ctx, ch.ID, client.PayParams{PayerDocument: payer}))(t)
		if paid.Status != client.ChargePaid || paid.Settlement.EndToEndID == "" {
			t.Fatalf("paid %+v", paid)
		}
		// Someone else pays a locked charge: the money goes back.
		other := must(qc.Charges.Create(ctx, client.ChargeParams{Amount: 500, Customer: &client.Customer{Name: "Ana", Document: payer}, ExpectedPayerTaxID: payer}))(t)
		if ch := must(qc.TestHelpers.PayCharge(ctx, other.ID, client.PayParams{PayerDocument: "11144477735"}))(t); ch.Status != client.ChargeRefunded {
			t.Fatalf("other payer: %s", ch.Status)
		}
		exp := must(qc.Charges.Create(ctx, client.ChargeParams{Amount: 700}))(t)
		if ch := must(qc.TestHelpers.ExpireCharge(ctx, exp.ID))(t); ch.Status != client.ChargeExpired {
			t.Fatalf("expire: %s", ch.Status)
		}
		_, err = qc.TestHelpers.PayCharge(ctx, exp.ID, client.PayParams{})
		apiErr(t, err, 409, "charge_expired")

		// Moving the clock past expires_at and the expiry grace (3 min by
		// default) expires a charge.
		late := must(qc.Charges.Create(ctx, client.ChargeParams{Amount: 800, ExpiresIn: 60}))(t)
		srv.Advance(t, 5*time.Minute)
		if ch := must(qc.Charges.Get(ctx, late.ID))(t); ch.Status != client.ChargeExpired {
			t.Fatalf("after the clock moved: %s", ch.Status)
		}

		// The iterator follows the cursor across pages, newest first.
		want := []string{late.ID, exp.ID, other.ID, ch.ID}
		var ids []string
		for c, err := range qc.Charges.List(ctx, client.ChargeListParams{Limit: 2}) {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, c.ID)
		}
		if !slices.Equal(ids, want) {
			t.Fatalf("listed %v, want %v", ids, want)
		}
		ids = ids[:0]
		for c, err := range qc.Charges.List(ctx, client.ChargeListParams{Limit: 1, Status: client.ChargeExpired}) {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, c.ID)
			if len(ids) == 1 {
				break // stopping early is allowed
			}
		}
		if !slices.Equal(ids, []string{late.ID}) {
			t.Fatalf("expired, first only: %v", ids)
		}
		page := must(qc.Charges.ListPage(ctx, client.ChargeListParams{Limit: 3}))(t)
		if len(page.Data) != 3 || !page.HasMore || page.NextCursor == nil || *page.NextCursor != other.ID || page.Object != "list" {
			t.Fatalf("page %+v", page)
		}
		// Every filter reaches the server under its own name.
		filtered := func(p client.ChargeListParams) []string {
			var ids []string
			for c, err := range qc.Charges.List(ctx, p) {
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, c.ID)
			}
			return ids
		}
		if got := filtered(client.ChargeListParams{CustomerID: payer}); !slices.Equal(got, []string{other.ID}) {
			t.Fatalf("customer_id: %v", got) // the one charge whose customer.document it is
		}
		if got := filtered(client.ChargeListParams{CreatedAfter: exp.CreatedAt, CreatedBefore: late.CreatedAt}); !slices.Equal(got, []string{late.ID, exp.ID}) {
			t.Fatalf("created range: %v", got)
		}
		for c, err := range qc.Charges.List(ctx, client.ChargeListParams{StartingAfter: "ch_x"}) {
			if c != nil || err == nil {
				t.Fatalf("a bad cursor yields the error: %v %v", c, err)
			}
			apiErr(t, err, 400, "parameter_invalid")
		}
	})
}

func TestPaymentsAndWalletsAgainstServer(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, srv *quitatest.Server) {
		ctx := context.Background()
		qc := srv.Client(client.WithStrictDecoding())

		created := must(qc.Payments.Create(ctx, client.PaymentParams{
			Amount: 5000, PaymentMethods: []string{client.MethodPix, client.MethodBoleto},
			CustomerName: "Maria Silva", CustomerID: "user-7", Metadata: map[string]any{"order": "1002"},
		}))(t)
		if !strings.HasPrefix(created.ID, "tx_") || created.Status != client.TxWaitingPayment || created.Amount != 5000 ||
			!slices.Equal(created.PaymentMethods, []string{"PIX", "BOLETO"}) || created.CustomerName == nil || *created.CustomerName != "Maria Silva" {
			t.Fatalf("created %+v", created)
		}
		srv.RunWorkers(t) // the acquirer fills the method data
		got := must(qc.Payments.Get(ctx, created.ID))(t)
		if got.PixCopyPaste == nil || got.PixQRCode == nil || !strings.HasPrefix(*got.PixQRCode, "data:image/png;base64,") ||
			got.BoletoLine == nil || got.PaidWith != nil || got.PaidAt != nil {
			t.Fatalf("read %+v", got)
		}
		_, err := qc.Payments.Refund(ctx, created.ID, client.RefundParams{Amount: 100})
		apiErr(t, err, 409, "charge_not_refundable")

		must(qc.TestHelpers.PayCharge(ctx, created.ID, client.PayParams{}))(t)
		paid := must(qc.Payments.Get(ctx, created.ID))(t)
		if paid.Status != client.TxPaid || paid.PaidWith == nil || *paid.PaidWith != "PIX" || paid.PaidAt == nil ||
			paid.NetAmount != paid.Amount-paid.ProviderFee-paid.PlatformFee || paid.ProviderFee == 0 {
			t.Fatalf("paid %+v", paid)
		}

		rf := must(qc.Payments.Refund(ctx, created.ID, client.RefundParams{Amount: 1000, Reason: "item out of stock", IdempotencyKey: "refund-1002-a"}))(t)
		if !strings.HasPrefix(rf.ID, "re_") || rf.TransactionID != created.ID || rf.Amount != 1000 || rf.Status != client.RefundPending || rf.Reason != "item out of stock" {
			t.Fatalf("refund %+v", rf)
		}
		if again := must(qc.Payments.Refund(ctx, created.ID, client.RefundParams{Amount: 1000, Reason: "item out of stock", IdempotencyKey: "refund-1002-a"}))(t); again.ID != rf.ID {
			t.Fatalf("a replayed refund is the original: %s vs %s", again.ID, rf.ID)
		}
		srv.RunWorkers(t) // the refund worker drives it to the end
		second := must(qc.Payments.Refund(ctx, created.ID, client.RefundParams{Amount: 500, Strategy: client.StrategyDevolution}))(t)
		failed := must(qc.TestHelpers.FailRefund(ctx, second.ID))(t)
		if failed.Status != client.RefundFailed || failed.ID != second.ID {
			t.Fatalf("failed refund %+v", failed)
		}
		refunds := must(qc.Payments.Refunds(ctx, created.ID))(t)
		if len(refunds) != 2 || refunds[0].ID != second.ID || refunds[1].ID != rf.ID || refunds[1].Status != client.RefundRefunded {
			t.Fatalf("refunds %+v %+v", refunds[0], refunds[1])
		}

		rc := must(qc.Payments.Receipt(ctx, created.ID))(t)
		if pdf, err := rc.Bytes(); err != nil || rc.ContentType != "application/pdf" || !bytes.HasPrefix(pdf, []byte("%PDF")) ||
			rc.Filename != "comprovante-"+created.ID+".pdf" {
			t.Fatalf("receipt %s %s %v", rc.ContentType, rc.Filename, err)
		}
		if en := must(qc.Payments.Receipt(ctx, created.ID, "en"))(t); en.Filename != "receipt-"+created.ID+".pdf" {
			t.Fatalf("English receipt %s", en.Filename)
		}
		if rr := must(qc.Payments.RefundReceipt(ctx, created.ID, rf.ID))(t); rr.Filename != "comprovante-devolucao-"+rf.ID+".pdf" {
			t.Fatalf("refund receipt %s", rr.Filename)
		}
		ps := must(qc.Payments.ProviderStatus(ctx, created.ID))(t)
		if ps.LocalStatus != client.TxPaid || ps.Provider == "" || ps.ProviderTransactionID == "" {
			t.Fatalf("provider status %+v", ps)
		}
		if rs := must(qc.Payments.ResendWebhook(ctx, created.ID))(t); !rs.Resent || rs.Status != client.TxPaid {
			t.Fatalf("resend %+v", rs)
		}

		open := must(qc.Payments.Create(ctx, client.PaymentParams{Amount: 700, PaymentMethods: []string{client.MethodPix}}))(t)
		if c := must(qc.Payments.Cancel(ctx, open.ID))(t); c.Status != client.TxCancelled {
			t.Fatalf("cancel %s", c.Status)
		}
		_, err = qc.Payments.Cancel(ctx, created.ID)
		apiErr(t, err, 409, "charge_not_cancellable")
		card := must(qc.Payments.Create(ctx, client.PaymentParams{Amount: 900, PaymentMethods: []string{client.MethodCreditCard},
			Metadata: map[string]any{"returnUrl": "https://loja.example.com/ok"}}))(t)
		if tx := must(qc.TestHelpers.TransitionPayment(ctx, card.ID, client.TxApproved, client.MethodCreditCard))(t); tx.Status != client.TxApproved {
			t.Fatalf("transition %s", tx.Status)
		}

		// The page iterator walks every page.
		var ids []string
		for pm, err := range qc.Payments.List(ctx, client.PaymentListParams{Limit: 2, SortOrder: "asc"}) {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, pm.ID)
		}
		if !slices.Equal(ids, []string{created.ID, open.ID, card.ID}) {
			t.Fatalf("listed %v", ids)
		}
		if pg := must(qc.Payments.ListPage(ctx, client.PaymentListParams{Status: client.TxCancelled}))(t); pg.Total != 1 || pg.Data[0].ID != open.ID {
			t.Fatalf("cancelled page %+v", pg)
		}
		if pg := must(qc.Payments.ListPage(ctx, client.PaymentListParams{SortBy: "amount", SortOrder: "asc"}))(t); pg.Data[0].ID != open.ID || pg.Data[2].ID != created.ID {
			t.Fatalf("sorted by amount: %s %s %s", pg.Data[0].ID, pg.Data[1].ID, pg.Data[2].ID)
		}
		if pg := must(qc.Payments.ListPage(ctx, client.PaymentListParams{StartDate: open.CreatedAt, EndDate: card.CreatedAt}))(t); pg.Total != 2 {
			t.Fatalf("date range: %d", pg.Total)
		}
		if pg := must(qc.Payments.ListPage(ctx, client.PaymentListParams{EndDate: created.CreatedAt.Add(-time.Hour)}))(t); pg.Total != 0 {
			t.Fatalf("before everything: %d", pg.Total)
		}

		st := must(qc.Payments.Stats(ctx, 7))(t)
		if st.TotalTransactions != 3 || st.PaidTransactions != 2 || len(st.VolumeByCurrency) == 0 || st.TodayVolumeByCurrency["BRL"] == 0 {
			t.Fatalf("stats %+v", st)
		}
		m := must(qc.Payments.Metrics(ctx, 0, "BRL"))(t)
		if m.Days != 7 || m.Created != 3 || m.Paid != 2 || m.Currency == nil || *m.Currency != "BRL" || len(m.Daily) == 0 || m.ConversionRate <= 0 {
			t.Fatalf("metrics %+v", m)
		}

		// Wallets: the paid amounts net of fees and refunds, pending until released.
		ws := must(qc.Wallets.List(ctx))(t)
		bal := must(qc.Wallets.Balance(ctx))(t)
		brl := must(qc.Wallets.BalanceIn(ctx, "BRL"))(t)
		if len(ws) == 0 || ws[0].WalletType != "OPERATIONAL" || bal.Currency != "BRL" || bal.Primary == nil ||
			bal.Total != bal.Available+bal.Pending || bal.Total == 0 || brl.Available != bal.Available || brl.Pending != bal.Pending ||
			brl.Balances != nil || ws[0].Balance != bal.Available || ws[0].PendingBalance != bal.Pending {
			t.Fatalf("wallets %+v balance %+v flat %+v", ws, bal, brl)
		}
	})
}

func TestWebhooksAgainstServer(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, srv *quitatest.Server) {
		ctx := context.Background()
		qc := srv.Client(client.WithStrictDecoding())

		// The merchant's handler verifies with the SDK and records events.
		recv := srv.NewReceiver(t, qc, client.EventChargePaid, client.EventPaymentCompleted)
		var (
			mu      sync.Mutex // deliveries arrive concurrently
			handled []string
		)
		recv.Handle(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ev, err := client.ParseWebhook(r, recv.Endpoint.Secret)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			mu.Lock()
			handled = append(handled, ev.Type)
			mu.Unlock()
		}))
		if len(recv.Endpoint.Secret) != 64 || recv.Endpoint.Status != client.EndpointActive {
			t.Fatalf("endpoint %+v", recv.Endpoint)
		}

		ch := must(qc.Charges.Create(ctx, client.ChargeParams{Amount: 1990}))(t)
		must(qc.TestHelpers.PayCharge(ctx, ch.ID, client.PayParams{PayerDocument: payer}))(t)
		d := recv.Wait(t, client.EventChargePaid, ch.ID)
		evCharge, err := d.Event.Charge()
		if err != nil || d.VerifyErr != nil || d.Status != 200 || evCharge.Status != client.ChargePaid || evCharge.Amount != 1990 ||
			!strings.HasPrefix(d.Event.ID, "evt_") || d.Header.Get(client.EventTypeHeader) != client.EventChargePaid {
			t.Fatalf("delivery %+v %v", d, err)
		}
		leg := recv.Wait(t, client.EventPaymentCompleted, ch.ID)
		if leg.VerifyErr != nil || !leg.Event.IsLegacy() || leg.Event.Legacy.Status != client.TxPaid || *leg.Event.Legacy.NetAmount == 0 {
			t.Fatalf("legacy %+v", leg.Event.Legacy)
		}
		mu.Lock()
		seen := slices.Clone(handled)
		mu.Unlock()
		if !slices.Contains(seen, client.EventChargePaid) || !slices.Contains(seen, client.EventPaymentCompleted) {
			t.Fatalf("handler saw %v", seen)
		}

		// Deliveries, their payloads as sent, and the stats.
		var payloads int
		for dl, err := range qc.Webhooks.ListDeliveries(ctx, client.DeliveryListParams{Limit: 1, EndpointID: recv.Endpoint.ID}) {
			if err != nil {
				t.Fatal(err)
			}
			ev, err := client.ParseEvent(dl.Payload)
			if err != nil || ev.Type != dl.EventType || dl.Status != client.DeliveryDelivered || dl.DeliveredAt == nil || *dl.EndpointID != recv.Endpoint.ID {
				t.Fatalf("delivery %+v %v", dl, err)
			}
			payloads++
		}
		for _, f := range []client.DeliveryListParams{{Status: client.DeliveryFailed}, {EventType: client.EventChargeExpired}, {EndpointID: "we_other"}} {
			if pg := must(qc.Webhooks.ListDeliveriesPage(ctx, f))(t); pg.Total != 0 || len(pg.Data) != 0 {
				t.Fatalf("filter %+v matched %d", f, pg.Total)
			}
		}
		if pg := must(qc.Webhooks.ListDeliveriesPage(ctx, client.DeliveryListParams{EventType: client.EventPaymentCompleted, Status: client.DeliveryDelivered}))(t); pg.Total != 1 {
			t.Fatalf("payment.completed delivered: %d", pg.Total)
		}
		stats := must(qc.Webhooks.DeliveryStats(ctx))(t)
		if payloads != 2 || stats.Delivered != 2 || stats.Total != 2 {
			t.Fatalf("%d deliveries listed, stats %+v", payloads, stats)
		}

		// Endpoint management; a rotated secret takes over at once.
		eps := must(qc.Webhooks.ListEndpoints(ctx))(t)
		if len(eps) != 1 || eps[0].ID != recv.Endpoint.ID || eps[0].Secret != "" || eps[0].CreatedAt.IsZero() {
			t.Fatalf("endpoints %+v", eps)
		}
		inactive := client.EndpointInactive
		up := must(qc.Webhooks.UpdateEndpoint(ctx, recv.Endpoint.ID, client.EndpointUpdate{Status: &inactive}))(t)
		if up.Status != client.EndpointInactive || up.URL != recv.Endpoint.URL {
			t.Fatalf("update %+v", up)
		}
		secret := must(qc.Webhooks.RotateSecret(ctx, recv.Endpoint.ID))(t)
		if len(secret) != 64 || secret == recv.Endpoint.Secret {
			t.Fatalf("rotated secret %q", secret)
		}
		if err := qc.Webhooks.DeleteEndpoint(ctx, recv.Endpoint.ID); err != nil {
			t.Fatal(err)
		}
		apiErr(t, qc.Webhooks.DeleteEndpoint(ctx, recv.Endpoint.ID), 404, "resource_not_found")

		cat := must(client.New(srv.BaseURL, "", client.WithStrictDecoding()).Webhooks.EventCatalog(ctx))(t)
		if !slices.ContainsFunc(cat, func(d client.EventDefinition) bool { return d.Event == client.EventPaymentCompleted && d.Legacy }) {
			t.Fatalf("catalog %+v", cat)
		}
		if s := must(qc.Webhooks.RotateTransactionSecret(ctx))(t); len(s) != 64 {
			t.Fatalf("transaction secret %q", s)
		}
	})
}

func TestAPIKeysAgainstServer(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, srv *quitatest.Server) {
		ctx := context.Background()
		acct := srv.NewAccount(t, "Loja Chaves")
		_, err := client.New(srv.BaseURL, "").Auth.Login(ctx, "nobody@example.com", "wrong-password")
		apiErr(t, err, 401, "invalid_credentials")
		dash := srv.DashboardClient(t, acct, client.WithStrictDecoding())
		// An API key cannot manage keys.
		_, err = srv.ClientFor(acct).APIKeys.List(ctx)
		apiErr(t, err, 401, "token_missing")

		k := must(dash.APIKeys.Issue(ctx, client.KeyParams{Label: "backend", Test: true}))(t)
		if !strings.Contains(k.APIKey, "_test_") || k.Label != "backend" || k.Fingerprint == "" || !strings.HasPrefix(k.APIKey, k.Prefix) {
			t.Fatalf("issued %+v", k)
		}
		withKey := client.New(srv.BaseURL, k.APIKey)
		must(withKey.Wallets.List(ctx))(t)
		keys := must(dash.APIKeys.List(ctx))(t)
		if !slices.ContainsFunc(keys, func(x *client.APIKey) bool { return x.ID == k.ID && x.Label == "backend" }) {
			t.Fatalf("keys %+v", keys)
		}
		label := "backend-2"
		rot := must(dash.APIKeys.Rotate(ctx, k.ID, &label))(t)
		if rot.APIKey == k.APIKey || rot.Label != "backend-2" {
			t.Fatalf("rotated %+v", rot)
		}
		if _, err := withKey.Wallets.List(ctx); !errors.Is(err, client.ErrUnauthorized) {
			t.Fatalf("the rotated key still works: %v", err)
		}
		must(client.New(srv.BaseURL, rot.APIKey).Wallets.List(ctx))(t)
		if err := dash.APIKeys.Revoke(ctx, rot.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := client.New(srv.BaseURL, rot.APIKey).Wallets.List(ctx); !errors.Is(err, client.ErrUnauthorized) {
			t.Fatalf("the revoked key still works: %v", err)
		}
		audit := must(dash.APIKeys.AuditLogs(ctx, 10))(t)
		if len(audit) < 3 || !slices.ContainsFunc(audit, func(e *client.AuditEntry) bool { return e.KeyID == k.ID && e.KeyFingerprint == k.Fingerprint }) {
			t.Fatalf("audit %+v", audit)
		}
		logs := must(dash.APIKeys.RequestLogs(ctx, rot.Fingerprint, 0))(t)
		if len(logs) == 0 || logs[0].APIKeyFingerprint != rot.Fingerprint || logs[0].Path != "/v1/wallets" || logs[0].Mode != "test" {
			t.Fatalf("request logs %+v", logs)
		}
		if err := dash.Auth.Logout(ctx); err != nil {
			t.Fatal(err)
		}
		_, err = dash.APIKeys.List(ctx)
		apiErr(t, err, 401, "token_invalid")
	})
}

func TestEventsAgainstServer(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, srv *quitatest.Server) {
		ctx := context.Background()
		qc := srv.Client(client.WithStrictDecoding())

		ch := must(qc.Charges.Create(ctx, client.ChargeParams{Amount: 1990}))(t)
		must(qc.TestHelpers.PayCharge(ctx, ch.ID, client.PayParams{}))(t)

		// Both families, newest first, each decodable like a webhook.
		var types []string
		for ev, err := range qc.Events.List(ctx, client.EventListParams{Limit: 1}) {
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(ev.ID, "evt_") || ev.Livemode || ev.CreatedAt.IsZero() {
				t.Fatalf("event %+v", ev)
			}
			if ev.IsLegacy() {
				if ev.Legacy.TransactionID != "tx_"+strings.TrimPrefix(ch.ID, "ch_") {
					t.Fatalf("legacy event %+v", ev.Legacy)
				}
			} else if c, err := ev.Charge(); err != nil || c.ID != ch.ID {
				t.Fatalf("charge of %s: %v %v", ev.Type, c, err)
			}
			types = append(types, ev.Type)
		}
		if !slices.Contains(types, client.EventChargePaid) || !slices.Contains(types, client.EventPaymentCompleted) ||
			types[len(types)-1] != client.EventChargeCreated && types[len(types)-1] != client.EventPaymentCreated {
			t.Fatalf("types %v", types)
		}
		page := must(qc.Events.ListPage(ctx, client.EventListParams{Types: []string{"charge.*"}}))(t)
		if len(page.Data) != 2 || page.Data[0].Type != client.EventChargePaid || page.Data[1].Type != client.EventChargeCreated || page.HasMore {
			t.Fatalf("charge.* page %+v", page)
		}
		one := must(qc.Events.Get(ctx, page.Data[0].ID))(t)
		if one.ID != page.Data[0].ID || string(one.Raw) != string(page.Data[0].Raw) {
			t.Fatalf("get %+v", one)
		}
		_, err := qc.Events.Get(ctx, "evt_doesnotexist0000")
		apiErr(t, err, 404, "resource_not_found")

		// Follow yields what is written after it starts, oldest first, once.
		fctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		next := make(chan *client.Charge, 1)
		go func() {
			time.Sleep(300 * time.Millisecond) // Follow is waiting by now
			c, err := qc.Charges.Create(ctx, client.ChargeParams{Amount: 777})
			if err != nil {
				t.Error(err)
			}
			next <- c
		}()
		var followed []string
		for ev, err := range qc.Events.Follow(fctx, time.Time{}, "charge.created") {
			if err != nil {
				t.Fatal(err)
			}
			c, err := ev.Charge()
			if err != nil {
				t.Fatal(err)
			}
			followed = append(followed, c.ID)
			break
		}
		created := <-next
		if len(followed) != 1 || followed[0] != created.ID {
			t.Fatalf("followed %v, want [%s]", followed, created.ID)
		}
		// From a time: the catch-up replays everything since, oldest first.
		var replay []string
		cctx, ccancel := context.WithTimeout(ctx, 20*time.Second)
		defer ccancel()
		for ev, err := range qc.Events.Follow(cctx, ch.CreatedAt.Add(-time.Second), "charge.*") {
			if err != nil {
				t.Fatal(err)
			}
			replay = append(replay, ev.Type)
			if len(replay) == 3 {
				break
			}
		}
		if !slices.Equal(replay, []string{client.EventChargeCreated, client.EventChargePaid, client.EventChargeCreated}) {
			t.Fatalf("replay %v", replay)
		}
	})
}

// Concurrent creates with one key — a client retrying while its first
// attempt is still running — all get the one charge: the server answers
// the later ones 409 idempotency_key_in_use (with Retry-After) until the
// first finishes, and the SDK waits and retries them with the same key.
func TestConcurrentRetriesOfOneKeyAgainstServer(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, srv *quitatest.Server) {
		ctx := context.Background()
		qc := srv.Client(client.WithRetryPolicy(client.RetryPolicy{MaxRetries: 10, BaseDelay: 20 * time.Millisecond}))
		p := client.ChargeParams{Amount: 4321, IdempotencyKey: "order-race-0001"}
		const n = 8
		ids := make(chan string, n)
		errs := make(chan error, n)
		for range n {
			go func() {
				ch, err := qc.Charges.Create(ctx, p)
				if err != nil {
					errs <- err
					return
				}
				ids <- ch.ID
			}()
		}
		var first string
		for range n {
			select {
			case err := <-errs:
				t.Fatal(err)
			case id := <-ids:
				if first == "" {
					first = id
				}
				if id != first {
					t.Fatalf("two charges for one key: %s and %s", first, id)
				}
			}
		}
		page := must(qc.Charges.ListPage(ctx, client.ChargeListParams{}))(t)
		if len(page.Data) != 1 || page.Data[0].ID != first {
			t.Fatalf("%d charges exist", len(page.Data))
		}
	})
}

func TestPayoutsAgainstServer(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, srv *quitatest.Server) {
		ctx := context.Background()
		qc := srv.Client(client.WithStrictDecoding())
		hook := srv.NewReceiver(t, qc, client.EventPayoutPaid)

		dest := client.PayoutKey{PixKey: "529.982.247-25"}
		_, err := qc.Payouts.Create(ctx, client.PayoutParams{Amount: 1000, Destination: dest})
		apiErr(t, err, 422, "insufficient_balance")

		ch := must(qc.Charges.Create(ctx, client.ChargeParams{Amount: 100000}))(t)
		must(qc.TestHelpers.PayCharge(ctx, ch.ID, client.PayParams{}))(t)

		p := client.PayoutParams{Amount: 1000, Destination: dest, Description: "saque", Metadata: map[string]any{"ref": 7}, IdempotencyKey: "payout-0001"}
		po := must(qc.Payouts.Create(ctx, p))(t)
		if !strings.HasPrefix(po.ID, "po_") || po.Object != "payout" || po.Status != client.PayoutPending || po.Amount != 1000 ||
			po.Destination.Type != client.PixKeyCPF || strings.Contains(po.Destination.Key, "52998224725") || po.Description == nil ||
			fmt.Sprint(po.Metadata["ref"]) != "7" {
			t.Fatalf("payout %+v", po)
		}
		if again := must(qc.Payouts.Create(ctx, p))(t); again.ID != po.ID {
			t.Fatalf("a replayed create is the original: %s", again.ID)
		}
		if got := must(qc.Payouts.Get(ctx, po.ID))(t); got.ID != po.ID || got.Fee != po.Fee {
			t.Fatalf("get %+v", got)
		}
		cancelled := must(qc.Payouts.Create(ctx, client.PayoutParams{Amount: 500, Destination: dest}))(t)
		if c := must(qc.Payouts.Cancel(ctx, cancelled.ID))(t); c.Status != client.PayoutCancelled || c.CancelledAt == nil {
			t.Fatalf("cancel %+v", c)
		}
		failed := must(qc.Payouts.Create(ctx, client.PayoutParams{Amount: 700, Destination: client.PayoutKey{PixKey: "loja@example.com", Type: client.PixKeyEmail}}))(t)
		if f := must(qc.TestHelpers.FailPayout(ctx, failed.ID, "invalid_key"))(t); f.Status != client.PayoutFailed || f.FailureCode == nil || *f.FailureCode != "invalid_key" {
			t.Fatalf("fail %+v", f)
		}
		paid := must(qc.TestHelpers.PayPayout(ctx, po.ID))(t)
		if paid.Status != client.PayoutPaid || paid.EndToEndID == nil || paid.PaidAt == nil {
			t.Fatalf("pay %+v", paid)
		}
		rc := must(qc.Payouts.Receipt(ctx, po.ID, "en"))(t)
		if pdf, err := rc.Bytes(); err != nil || rc.ContentType != "application/pdf" || !bytes.HasPrefix(pdf, []byte("%PDF")) {
			t.Fatalf("payout receipt %s %v", rc.ContentType, err)
		}
		_, err = qc.Payouts.Receipt(ctx, cancelled.ID)
		if e := new(client.Error); !errors.As(err, &e) || e.HTTPStatus != 422 {
			t.Fatalf("a cancelled payout's receipt: %v", err)
		}
		d := hook.Wait(t, client.EventPayoutPaid, po.ID)
		if ep, err := d.Event.Payout(); err != nil || ep.ID != po.ID || d.VerifyErr != nil {
			t.Fatalf("payout.paid %+v %v", ep, err)
		}

		// The payouts worker sends a pending payout to the sandbox PSP.
		sent := must(qc.Payouts.Create(ctx, client.PayoutParams{Amount: 300, Destination: dest}))(t)
		srv.RunWorkers(t)
		if got := must(qc.Payouts.Get(ctx, sent.ID))(t); got.Status == client.PayoutPending {
			t.Fatalf("still pending after the workers ran: %+v", got)
		}

		var ids []string
		for p, err := range qc.Payouts.List(ctx, client.PayoutListParams{Limit: 1}) {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, p.ID)
		}
		if !slices.Equal(ids, []string{sent.ID, failed.ID, cancelled.ID, po.ID}) {
			t.Fatalf("listed %v", ids)
		}
		if pg := must(qc.Payouts.ListPage(ctx, client.PayoutListParams{Status: client.PayoutCancelled}))(t); len(pg.Data) != 1 || pg.Data[0].ID != cancelled.ID {
			t.Fatalf("cancelled page %+v", pg)
		}
	})
}

// A registration and a key issue given an IdempotencyKey, sent again (an
// answer the caller lost), return the first endpoint and key, secrets
// included, and make nothing more.
func TestKeyedWritesAgainstServer(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, srv *quitatest.Server) {
		ctx := context.Background()
		acct := srv.NewAccount(t, "Loja Retentativa")
		qc := srv.ClientFor(acct)
		p := client.EndpointParams{URL: "http://127.0.0.1:9/hooks", Events: []string{client.EventChargePaid}, IdempotencyKey: "erp-hooks-2026-11"}
		first := must(qc.Webhooks.CreateEndpoint(ctx, p))(t)
		again := must(qc.Webhooks.CreateEndpoint(ctx, p))(t)
		if again.ID != first.ID || again.Secret != first.Secret || first.Secret == "" {
			t.Fatalf("retried registration: %s/%s, first %s/%s", again.ID, again.Secret, first.ID, first.Secret)
		}
		if eps := must(qc.Webhooks.ListEndpoints(ctx))(t); len(eps) != 1 {
			t.Fatalf("%d endpoints, want 1", len(eps))
		}

		dash := srv.DashboardClient(t, acct)
		before := len(must(dash.APIKeys.List(ctx))(t))
		kp := client.KeyParams{Label: "erp", Test: true, IdempotencyKey: "erp-key-2026-11"}
		k1 := must(dash.APIKeys.Issue(ctx, kp))(t)
		k2 := must(dash.APIKeys.Issue(ctx, kp))(t)
		if k1.ID != k2.ID || k1.APIKey != k2.APIKey {
			t.Fatalf("retried issue: %s, first %s", k2.ID, k1.ID)
		}
		if n := len(must(dash.APIKeys.List(ctx))(t)); n != before+1 {
			t.Fatalf("%d keys, want %d", n, before+1)
		}
	})
}
