package httpapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

func TestPaymentsEndpoints(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			testPaymentCreate(t, e)
			testPaymentMethods(t, e)
			testPaymentListAndStats(t, e)
			testPaymentCancel(t, e)
			testPaymentRefunds(t, e)
			testPaymentExtras(t, e)
			testPaymentHelpers(t, e)
			testAccountFees(t, e)
			e.verifyLedger()
		})
	}
}

func testPaymentCreate(t *testing.T, e *payEnv) {
	k := e.key()
	body := map[string]any{"amount": 10000, "paymentMethods": []string{"PIX"}, "customerName": "Ana",
		"customerEmail": "ana@example.com", "customerDocument": "52998224725", "metadata": map[string]any{"order": 7},
		"idempotencyKey": k}
	r := e.call("POST", "/payments", e.acct.TestKey, body)
	e.want(r, 201, "")
	id := r.str("id")
	if !strings.HasPrefix(id, "tx_") || r.str("status") != "WAITING_PAYMENT" || r.str("currency") != "BRL" || r.num("amount") != 10000 {
		t.Fatalf("create body: %s", r.Raw)
	}
	for _, f := range []string{"id", "status", "amount", "currency", "paymentMethods", "customerName", "customerDocument", "customerEmail", "metadata", "createdAt"} {
		if _, ok := r.Body[f]; !ok {
			t.Errorf("create response lacks %s: %s", f, r.Raw)
		}
	}
	if _, ok := r.Body["pixCopyPaste"]; ok {
		t.Errorf("create response carries method fields: %s", r.Raw)
	}
	again := e.call("POST", "/payments", e.acct.TestKey, body)
	e.want(again, 201, "")
	if !bytes.Equal(again.Raw, r.Raw) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %s (replayed %q), want %s", again.Raw, again.Header.Get("Idempotent-Replayed"), r.Raw)
	}
	body["amount"] = 10001
	e.want(e.call("POST", "/payments", e.acct.TestKey, body), 409, "idempotency_key_reused")

	bad := []struct {
		name string
		body map[string]any
		code string
	}{
		{"no key", map[string]any{"amount": 100, "paymentMethods": []string{"PIX"}}, "idempotency_key_missing"},
		{"short key", map[string]any{"amount": 100, "paymentMethods": []string{"PIX"}, "idempotencyKey": "short"}, "idempotency_key_invalid"},
		{"no amount", map[string]any{"paymentMethods": []string{"PIX"}, "idempotencyKey": e.key()}, "parameter_missing"},
		{"zero amount", map[string]any{"amount": 0, "paymentMethods": []string{"PIX"}, "idempotencyKey": e.key()}, "parameter_invalid"},
		{"no methods", map[string]any{"amount": 100, "idempotencyKey": e.key()}, "parameter_missing"},
		{"unknown method", map[string]any{"amount": 100, "paymentMethods": []string{"PAYPAL"}, "idempotencyKey": e.key()}, "parameter_invalid"},
		{"pix in EUR", map[string]any{"amount": 100, "currency": "EUR", "paymentMethods": []string{"PIX"}, "idempotencyKey": e.key()}, "parameter_invalid"},
		{"boleto in USD", map[string]any{"amount": 100, "currency": "USD", "paymentMethods": []string{"BOLETO"}, "idempotencyKey": e.key()}, "parameter_invalid"},
		{"mbway without phone", map[string]any{"amount": 100, "currency": "EUR", "paymentMethods": []string{"MBWAY"}, "idempotencyKey": e.key()}, "parameter_invalid"},
		{"bad email", map[string]any{"amount": 100, "paymentMethods": []string{"PIX"}, "customerEmail": "not an email", "idempotencyKey": e.key()}, "parameter_invalid"},
		{"long currency", map[string]any{"amount": 100, "currency": "ABCDEFGHI", "paymentMethods": []string{"CRYPTO"}, "idempotencyKey": e.key()}, "parameter_invalid"},
		{"unknown field", map[string]any{"amount": 100, "paymentMethods": []string{"PIX"}, "idempotencyKey": e.key(), "bogus": 1}, ""},
	}
	for _, b := range bad {
		r := e.call("POST", "/payments", e.acct.TestKey, b.body)
		if r.Status != 400 || (b.code != "" && r.code() != b.code) {
			t.Errorf("%s: got %d %s, want 400 %s: %s", b.name, r.Status, r.code(), b.code, r.Raw)
		}
	}
	e.want(e.call("POST", "/payments", "qt_test_invalid", map[string]any{}), 401, "")

	raw := strings.TrimPrefix(id, "tx_")
	for _, form := range []string{id, raw, "ch_" + raw} {
		g := e.call("GET", "/payments/"+form, e.acct.TestKey, nil)
		e.want(g, 200, "")
		if g.str("id") != id || !strings.HasPrefix(g.str("pixQrCode"), "data:image/png;base64,") || g.str("pixCopyPaste") == "" {
			t.Fatalf("read %s: %s", form, g.Raw)
		}
		if g.Body["boletoLine"] != nil || g.Body["paidWith"] != nil || g.Body["paidAt"] != nil {
			t.Errorf("unpaid pix read carries fields of other methods: %s", g.Raw)
		}
	}
	ch := e.call("GET", "/charges/ch_"+raw, e.acct.TestKey, nil)
	if ch.Status != 200 || ch.str("status") != "pending" || ch.str("id") != "ch_"+raw {
		t.Fatalf("charges surface: %d %s", ch.Status, ch.Raw)
	}
	e.want(e.call("GET", "/payments/tx_"+strings.Repeat("a", 26), e.acct.TestKey, nil), 404, "resource_not_found")
	other := e.srv.NewAccount(t, "Outra")
	e.want(e.call("GET", "/payments/"+id, other.TestKey, nil), 404, "")
	e.want(e.call("GET", "/payments/"+id, e.acct.LiveKey, nil), 404, "")
}

func testPaymentMethods(t *testing.T, e *payEnv) {
	boleto := e.create(12345, "BRL", "BOLETO")
	g := e.finalised(boleto, "boletoLine")
	if !domain.ValidBoletoLine(g.str("boletoLine")) || !domain.ValidBoletoBarcode(g.str("boletoBarcode")) ||
		domain.BoletoLineToBarcode(g.str("boletoLine")) != g.str("boletoBarcode") || g.Body["boletoExpiresAt"] == nil {
		t.Errorf("boleto data invalid: %s", g.Raw)
	}
	if !strings.HasSuffix(g.str("boletoBarcode")[9:19], "0000012345") || g.Body["pixCopyPaste"] != nil {
		t.Errorf("boleto barcode does not carry the amount or pix present: %s", g.Raw)
	}
	mb := e.finalised(e.create(2500, "EUR", "MULTIBANCO"), "mbReference")
	if len(mb.str("mbEntity")) != 5 || !domain.ValidMultibancoReference(mb.str("mbEntity"), mb.str("mbReference"), 2500) {
		t.Errorf("multibanco: %s", mb.Raw)
	}
	card := e.finalised(e.create(5000, "BRL", "CREDIT_CARD"), "cardRedirectUrl")
	if u := card.str("cardRedirectUrl"); !strings.HasPrefix(u, "http://") || !strings.HasSuffix(u, "/card") {
		t.Errorf("card: %s", card.Raw)
	}
	crypto := e.finalised(e.create(10000, "USDT", "CRYPTO"), "cryptoAddress")
	if len(crypto.str("cryptoAddress")) != 42 || crypto.str("cryptoNetwork") == "" || crypto.str("cryptoCurrency") != "USDT" ||
		crypto.str("cryptoAmount") != "100.00" {
		t.Errorf("crypto: %s", crypto.Raw)
	}
	mbway := e.call("GET", "/payments/"+e.create(1000, "EUR", "MBWAY"), e.acct.TestKey, nil)
	if mbway.str("status") != "WAITING_PAYMENT" || mbway.Body["mbEntity"] != nil {
		t.Errorf("mbway: %s", mbway.Raw)
	}
}

func testPaymentListAndStats(t *testing.T, e *payEnv) {
	r := e.call("GET", "/payments", e.acct.TestKey, nil)
	e.want(r, 200, "")
	data, _ := r.Body["data"].([]any)
	if r.num("page") != 1 || r.num("limit") != 20 || r.num("total") < 6 || int64(len(data)) != min(r.num("total"), 20) {
		t.Fatalf("list: %s", r.Raw)
	}
	p := e.call("GET", "/payments?limit=2&page=2&sortBy=amount&sortOrder=asc", e.acct.TestKey, nil)
	e.want(p, 200, "")
	items, _ := p.Body["data"].([]any)
	if len(items) != 2 || items[0].(map[string]any)["amount"].(float64) > items[1].(map[string]any)["amount"].(float64) {
		t.Errorf("sorted page: %s", p.Raw)
	}
	f := e.call("GET", "/payments?status=WAITING_PAYMENT&startDate=2000-01-01&endDate=2999-01-01", e.acct.TestKey, nil)
	e.want(f, 200, "")
	if f.num("total") != r.num("total") {
		t.Errorf("filtered total %d, want %d", f.num("total"), r.num("total"))
	}
	// The bounds include the createdAt the API shows (to the millisecond),
	// as the charge list's do: a payment's own createdAt as both bounds
	// finds it.
	first, _ := data[0].(map[string]any)
	at := first["createdAt"].(string)
	own := e.call("GET", "/payments?startDate="+at+"&endDate="+at, e.acct.TestKey, nil)
	if own.num("total") < 1 {
		t.Errorf("startDate=endDate=createdAt of %s: %s", first["id"], own.Raw)
	}
	none := e.call("GET", "/payments?status=PAID", e.acct.TestKey, nil)
	if none.num("total") != 0 {
		t.Errorf("PAID total: %s", none.Raw)
	}
	for _, q := range []string{"limit=101", "limit=0", "page=0", "sortBy=nope", "sortOrder=up", "status=paid", "startDate=yesterday"} {
		e.want(e.call("GET", "/payments?"+q, e.acct.TestKey, nil), 400, "")
	}
	s := e.call("GET", "/payments/stats?days=7", e.acct.TestKey, nil)
	e.want(s, 200, "")
	for _, k := range []string{"totalTransactions", "paidTransactions", "todayTransactions", "successRate", "volumeByCurrency", "todayVolumeByCurrency", "dailyVolume", "methodBreakdown"} {
		if _, ok := s.Body[k]; !ok {
			t.Errorf("stats lacks %s: %s", k, s.Raw)
		}
	}
	if s.num("totalTransactions") != r.num("total") || s.num("todayTransactions") != r.num("total") {
		t.Errorf("stats totals: %s", s.Raw)
	}
	m := e.call("GET", "/payments/metrics?currency=BRL", e.acct.TestKey, nil)
	e.want(m, 200, "")
	if m.num("days") != 7 || m.str("currency") != "BRL" || m.Body["medianSecondsToPay"] != nil {
		t.Errorf("metrics: %s", m.Raw)
	}
	e.want(e.call("GET", "/payments/stats?days=0", e.acct.TestKey, nil), 400, "parameter_invalid")
	e.want(e.call("GET", "/payments/metrics?days=abc", e.acct.TestKey, nil), 400, "parameter_invalid")
	e.want(e.call("GET", "/payments/metrics?currency=E", e.acct.TestKey, nil), 400, "")
}

func testPaymentCancel(t *testing.T, e *payEnv) {
	id := e.create(1500, "BRL", "PIX")
	c := e.call("POST", "/payments/"+id+"/cancel", e.acct.TestKey, nil)
	e.want(c, 200, "")
	if c.str("status") != "CANCELLED" {
		t.Fatalf("cancel: %s", c.Raw)
	}
	e.want(e.call("POST", "/payments/"+id+"/cancel", e.acct.TestKey, nil), 409, "charge_not_cancellable")
	if ch := e.call("GET", "/charges/"+id, e.acct.TestKey, nil); ch.str("status") != "cancelled" {
		t.Errorf("charge after cancel: %s", ch.Raw)
	}
	evs, err := e.srv.App.DB.ListChargeEvents(context.Background(), ports.Scope{AccountID: e.acct.AccountID, Mode: domain.ModeTest}, strings.TrimPrefix(id, "tx_"))
	if err != nil {
		t.Fatal(err)
	}
	if !hasEvent(evs, domain.EventPaymentFailed) || !hasEvent(evs, domain.EventChargeFailed) {
		t.Errorf("cancel events: %v", eventTypes(evs))
	}
	paid := e.create(1500, "BRL", "PIX")
	e.payPix(paid)
	e.want(e.call("POST", "/payments/"+paid+"/cancel", e.acct.TestKey, nil), 409, "charge_not_cancellable")
	e.want(e.call("POST", "/payments/tx_"+strings.Repeat("b", 26)+"/cancel", e.acct.TestKey, nil), 404, "")
}

func testPaymentExtras(t *testing.T, e *payEnv) {
	id := e.create(4200, "BRL", "PIX")
	e.want(e.call("GET", "/payments/"+id+"/receipt", e.acct.TestKey, nil), 422, "receipt_unavailable")
	ps := e.call("GET", "/payments/"+id+"/provider-status", e.acct.TestKey, nil)
	e.want(ps, 200, "")
	if ps.str("localStatus") != "WAITING_PAYMENT" || ps.str("provider") != "sandbox" || ps.str("providerTransactionId") == "" || ps.Body["rawResponse"] == nil {
		t.Errorf("provider-status: %s", ps.Raw)
	}
	mbway := e.create(1000, "EUR", "MBWAY")
	e.want(e.call("GET", "/payments/"+mbway+"/provider-status", e.acct.TestKey, nil), 422, "TRANSACTION_HAS_NO_PROVIDER_REFERENCE")
	e.payPix(id)
	rc := e.call("GET", "/payments/"+id+"/receipt", e.acct.TestKey, nil)
	e.want(rc, 200, "")
	pdf, err := base64.StdEncoding.DecodeString(rc.str("base64"))
	if err != nil || rc.str("contentType") != "application/pdf" || !bytes.HasPrefix(pdf, []byte("%PDF-")) || !bytes.Contains(pdf, []byte("%%EOF")) {
		t.Errorf("receipt: %s", rc.Raw)
	}
	scope := ports.Scope{AccountID: e.acct.AccountID, Mode: domain.ModeTest}
	before, _ := e.srv.App.DB.ListChargeEvents(context.Background(), scope, strings.TrimPrefix(id, "tx_"))
	rs := e.call("POST", "/payments/"+id+"/resend-webhook", e.acct.TestKey, nil)
	e.want(rs, 200, "")
	if rs.Body["resent"] != true || rs.str("status") != "PAID" {
		t.Errorf("resend: %s", rs.Raw)
	}
	after, _ := e.srv.App.DB.ListChargeEvents(context.Background(), scope, strings.TrimPrefix(id, "tx_"))
	if len(after) <= len(before) || !hasEvent(after[len(before):], domain.EventPaymentCompleted) {
		t.Errorf("resend wrote %v", eventTypes(after[len(before):]))
	}
	for _, p := range []string{"/receipt", "/provider-status"} {
		e.want(e.call("GET", "/payments/tx_"+strings.Repeat("d", 26)+p, e.acct.TestKey, nil), 404, "")
	}
	e.want(e.call("POST", "/payments/tx_"+strings.Repeat("d", 26)+"/resend-webhook", e.acct.TestKey, nil), 404, "")
	s := e.call("GET", "/payments/stats", e.acct.TestKey, nil)
	if s.num("paidTransactions") == 0 || s.num("successRate") == 0 {
		t.Errorf("stats after payments: %s", s.Raw)
	}
	m := e.call("GET", "/payments/metrics?days=30", e.acct.TestKey, nil)
	if m.num("paid") == 0 || m.num("volume") == 0 || m.Body["medianSecondsToPay"] == nil || m.num("refundedVolume") == 0 {
		t.Errorf("metrics after payments: %s", m.Raw)
	}
}

func testAccountFees(t *testing.T, e *payEnv) {
	cheap := e.srv.NewAccount(t, "Loja Parceira")
	err := e.srv.App.Payments.SetAccountFee(context.Background(), cheap.AccountID, domain.MethodPix,
		domain.FeeSchedule{Provider: domain.Fee{BPS: 10}, Platform: domain.Fee{Fixed: 5}})
	if err != nil {
		t.Fatal(err)
	}
	r := e.call("POST", "/payments", cheap.TestKey, map[string]any{"amount": 10000, "paymentMethods": []string{"PIX"}, "idempotencyKey": e.key()})
	e.want(r, 201, "")
	e.want(e.call("POST", "/test_helpers/charges/"+r.str("id")+"/pay", cheap.TestKey, map[string]any{}), 200, "")
	g := e.call("GET", "/payments/"+r.str("id"), cheap.TestKey, nil)
	if g.num("providerFee") != 10 || g.num("platformFee") != 5 || g.num("netAmount") != 9985 {
		t.Errorf("account fee override not applied: %s", g.Raw)
	}
}

func testPaymentHelpers(t *testing.T, e *payEnv) {
	card := e.create(10000, "BRL", "CREDIT_CARD", "PIX")
	tr := e.call("POST", "/test_helpers/payments/"+card+"/transition", e.acct.TestKey, map[string]any{"status": "APPROVED", "paidWith": "CREDIT_CARD"})
	e.want(tr, 200, "")
	// 299 bps + (349 bps + 39) of 10000.
	if tr.str("status") != "APPROVED" || tr.num("providerFee") != 299 || tr.num("platformFee") != 388 || tr.num("netAmount") != 9313 {
		t.Fatalf("card approve: %s", tr.Raw)
	}
	_, pending := e.balance("BRL")
	if pending < 9313 {
		t.Errorf("card money is not pending: %d", pending)
	}
	w := e.call("GET", "/wallets/balance", e.acct.TestKey, nil)
	if w.Body["next_release_at"] == nil || w.num("next_release_amount") <= 0 || w.num("retained") != pending || w.str("currency") != "BRL" {
		t.Errorf("balance: %s", w.Raw)
	}
	wl := e.call("GET", "/wallets", e.acct.TestKey, nil)
	var wallets []map[string]any
	if err := json.Unmarshal(wl.Raw, &wallets); err != nil || len(wallets) == 0 {
		t.Fatalf("wallets: %s", wl.Raw)
	}
	avail, _ := e.balance("BRL")
	if wallets[0]["currency"] != "BRL" || int64(wallets[0]["balance"].(float64)) != avail || int64(wallets[0]["pendingBalance"].(float64)) != pending ||
		wallets[0]["walletType"] != "OPERATIONAL" {
		t.Errorf("wallets %v, want balance %d pending %d", wallets, avail, pending)
	}
	e.clock.Advance(31 * 24 * time.Hour)
	if n, err := e.srv.App.Payments.ReleaseDue(context.Background()); err != nil || n == 0 {
		t.Fatalf("release: %d %v", n, err)
	}
	if a, p := e.balance("BRL"); a != avail+pending || p != 0 {
		t.Errorf("after release available %d pending %d, want %d 0", a, p, avail+pending)
	}
	for _, b := range []map[string]any{
		{"status": "PAID", "paidWith": "CREDIT_CARD"},
		{"status": "REFUNDED"},
		{"status": "WHATEVER"},
		{},
	} {
		r := e.call("POST", "/test_helpers/payments/"+card+"/transition", e.acct.TestKey, b)
		if r.Status != 400 && r.Status != 409 {
			t.Errorf("transition %v: %d %s", b, r.Status, r.Raw)
		}
	}
	e.want(e.call("POST", "/test_helpers/payments/"+card+"/transition", e.acct.TestKey, map[string]any{"status": "DISPUTE"}), 200, "")
	e.want(e.call("POST", "/test_helpers/payments/"+card+"/transition", e.acct.LiveKey, map[string]any{"status": "CHARGEBACK"}), 404, "")
	e.want(e.call("POST", "/test_helpers/payments/"+card+"/transition", e.acct.TestKey, map[string]any{"status": "CHARGEBACK"}), 200, "")
	e.want(e.call("POST", "/test_helpers/payments/"+card+"/transition", e.acct.TestKey, map[string]any{"status": "APPROVED"}), 409, "invalid_transition")
	w2 := e.call("GET", "/wallets/balance", e.acct.TestKey, nil)
	bals, _ := w2.Body["balances"].([]any)
	if len(bals) == 0 || w2.Body["primary"] == nil || w2.Body["next_release_at"] != nil || w2.Body["next_release_amount"] != nil {
		t.Errorf("balance shape: %s", w2.Raw)
	}
	e.want(e.call("GET", "/wallets/balance?currency=X", e.acct.TestKey, nil), 400, "")
	e.want(e.call("GET", "/wallets/balance", "", nil), 401, "")
}

// TestMethodFinalisationRecovers: with the acquirer down, the create still
// answers WAITING_PAYMENT without method data; the recovery worker fills
// it once the acquirer is back.
func TestMethodFinalisationRecovers(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			e.srv.Sandbox.SetDown(true)
			id := e.create(5000, "BRL", "BOLETO")
			e.srv.App.Charges.WaitBackground()
			g := e.call("GET", "/payments/"+id, e.acct.TestKey, nil)
			if g.str("status") != "WAITING_PAYMENT" || g.Body["boletoLine"] != nil {
				t.Fatalf("with the acquirer down: %s", g.Raw)
			}
			e.srv.Sandbox.SetDown(false)
			e.clock.Advance(2 * time.Second)
			if n, err := e.srv.App.Payments.FinalizePendingMethods(context.Background()); err != nil || n != 1 {
				t.Fatalf("recovery: %d %v", n, err)
			}
			g = e.call("GET", "/payments/"+id, e.acct.TestKey, nil)
			if !domain.ValidBoletoLine(g.str("boletoLine")) {
				t.Errorf("after recovery: %s", g.Raw)
			}
			if n, _ := e.srv.App.Payments.FinalizePendingMethods(context.Background()); n != 0 {
				t.Errorf("finalised again: %d", n)
			}
		})
	}
}
