package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
)

// TestPayouts covers every payout endpoint and error on both databases.
func TestPayouts(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			// A per-account PIX_OUT fee override: 75 centavos a payout.
			if err := e.srv.App.Payments.SetAccountFee(context.Background(), e.acct.AccountID, domain.FeeKeyPixOut,
				domain.FeeSchedule{Platform: domain.Fee{Fixed: 75}}); err != nil {
				t.Fatal(err)
			}
			testPayoutCreate(t, e)
			testPayoutListAndCancel(t, e)
			testPayoutSendAndHelpers(t, e)
			testPayoutConcurrentCreates(t, e)
			e.verifyLedger()
		})
	}
}

// postPayout sends POST /v1/payouts with an Idempotency-Key ("" sends
// none).
func (e *payEnv) postPayout(apikey, idemKey string, body any) payResp {
	e.t.Helper()
	h := testkit.Header{"apikey": apikey}
	if idemKey != "" {
		h["Idempotency-Key"] = idemKey
	}
	r := testkit.Do(e.t, "POST", e.srv.BaseURL+"/payouts", body, h)
	out := payResp{Status: r.Status, Header: r.Header, Raw: r.Body}
	if err := json.Unmarshal(r.Body, &out.Body); err != nil {
		e.t.Fatalf("POST /payouts: %s: %v", r.Body, err)
	}
	return out
}

// fundPayouts credits the test wallet with a paid Pix payment.
func (e *payEnv) fundPayouts(amount int64) {
	e.t.Helper()
	e.payPix(e.create(amount, "BRL", "PIX"))
}

func (e *payEnv) payoutEvents(id string) []domain.EventType {
	e.t.Helper()
	evs, err := e.srv.App.DB.ListChargeEvents(context.Background(), ports.Scope{AccountID: e.acct.AccountID, Mode: domain.ModeTest}, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return eventTypes(evs)
}

func testPayoutCreate(t *testing.T, e *payEnv) {
	body := map[string]any{"amount": 1000, "destination": map[string]any{"pix_key": "529.982.247-25"}}
	// Nothing in the wallet yet: 422, and no payout.
	e.want(e.postPayout(e.acct.TestKey, e.key(), body), 422, "insufficient_balance")
	e.fundPayouts(100000) // 99010 net
	avail, _ := e.balance("BRL")

	for _, tt := range []struct {
		name, key   string
		body        any
		status      int
		code, param string
	}{
		{"no key", "", body, 400, "idempotency_key_missing", "Idempotency-Key"},
		{"short key", "short", body, 400, "idempotency_key_invalid", "Idempotency-Key"},
		{"no amount", e.key(), map[string]any{"destination": map[string]any{"pix_key": "52998224725"}}, 400, "parameter_missing", "amount"},
		{"zero amount", e.key(), map[string]any{"amount": 0, "destination": map[string]any{"pix_key": "52998224725"}}, 400, "parameter_invalid", "amount"},
		{"no destination", e.key(), map[string]any{"amount": 100}, 400, "parameter_missing", "destination.pix_key"},
		{"bad CPF", e.key(), map[string]any{"amount": 100, "destination": map[string]any{"pix_key": "529.982.247-26"}}, 400, "parameter_invalid", "destination.pix_key"},
		{"not a key", e.key(), map[string]any{"amount": 100, "destination": map[string]any{"pix_key": "hello"}}, 400, "parameter_invalid", "destination.pix_key"},
		{"wrong typed key", e.key(), map[string]any{"amount": 100, "destination": map[string]any{"pix_key": "52998224725", "type": "email"}}, 400, "parameter_invalid", "destination.pix_key"},
		{"unknown type", e.key(), map[string]any{"amount": 100, "destination": map[string]any{"pix_key": "52998224725", "type": "iban"}}, 400, "parameter_invalid", "destination.type"},
		{"unknown field", e.key(), map[string]any{"amount": 100, "destination": map[string]any{"pix_key": "52998224725"}, "speed": "fast"}, 400, "", ""},
		{"not BRL", e.key(), map[string]any{"amount": 100, "currency": "EUR", "destination": map[string]any{"pix_key": "52998224725"}}, 400, "parameter_invalid", "currency"},
		{"beyond available", e.key(), map[string]any{"amount": avail - 74, "destination": map[string]any{"pix_key": "52998224725"}}, 422, "insufficient_balance", "amount"},
	} {
		r := e.postPayout(e.acct.TestKey, tt.key, tt.body)
		if r.Status != tt.status || (tt.code != "" && r.code() != tt.code) || (tt.param != "" && r.param() != tt.param) {
			t.Errorf("%s: %d %s %s, want %d %s %s: %s", tt.name, r.Status, r.code(), r.param(), tt.status, tt.code, tt.param, r.Raw)
		}
		if strings.Contains(string(r.Raw), "52998224725") || strings.Contains(string(r.Raw), "529.982.247-26") {
			t.Errorf("%s: the error repeats the key: %s", tt.name, r.Raw)
		}
	}
	if a, _ := e.balance("BRL"); a != avail {
		t.Fatalf("refused payouts moved the balance: %d, want %d", a, avail)
	}

	k := e.key()
	body = map[string]any{"amount": 2500, "destination": map[string]any{"pix_key": "529.982.247-25"}, "description": "saque semanal",
		"metadata": map[string]any{"ref": "w-1"}}
	r := e.postPayout(e.acct.TestKey, k, body)
	e.want(r, 201, "")
	dest, _ := r.Body["destination"].(map[string]any)
	if !strings.HasPrefix(r.str("id"), "po_") || r.str("object") != "payout" || r.str("status") != "pending" || r.num("amount") != 2500 ||
		r.num("fee") != 75 || r.str("currency") != "BRL" || dest["type"] != "cpf" || dest["key"] != "***.982.247-**" ||
		r.Body["end_to_end_id"] != nil || r.str("description") != "saque semanal" || r.Body["created_at"] == nil {
		t.Fatalf("created payout: %s", r.Raw)
	}
	if strings.Contains(string(r.Raw), "52998224725") {
		t.Errorf("the payout shows the full CPF: %s", r.Raw)
	}
	if a, _ := e.balance("BRL"); a != avail-2575 {
		t.Errorf("available after the payout %d, want %d", a, avail-2575)
	}
	// Replay: the same bytes, marked; the same key with another body: 409.
	again := e.postPayout(e.acct.TestKey, k, body)
	if again.Status != 201 || !bytes.Equal(again.Raw, r.Raw) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %d %s", again.Status, again.Raw)
	}
	if a, _ := e.balance("BRL"); a != avail-2575 {
		t.Errorf("the replay moved money again: %d", a)
	}
	body["amount"] = 2501
	e.want(e.postPayout(e.acct.TestKey, k, body), 409, "idempotency_key_reused")
	// A charge's key cannot be reused for a payout.
	ck := e.key()
	cr := e.call("POST", "/payments", e.acct.TestKey, map[string]any{"amount": 100, "paymentMethods": []string{"PIX"}, "idempotencyKey": ck})
	e.want(cr, 201, "")
	e.want(e.postPayout(e.acct.TestKey, ck, body), 409, "idempotency_key_reused")

	g := e.call("GET", "/payouts/"+r.str("id"), e.acct.TestKey, nil)
	if g.Status != 200 || g.str("id") != r.str("id") || g.str("status") != "pending" {
		t.Errorf("get: %s", g.Raw)
	}
	e.want(e.call("GET", "/payouts/"+r.str("id"), e.acct.LiveKey, nil), 404, "resource_not_found")
	other := e.srv.NewAccount(t, "Outra Loja")
	e.want(e.call("GET", "/payouts/"+r.str("id"), other.TestKey, nil), 404, "resource_not_found")
	e.want(e.call("GET", "/payouts/po_nope", e.acct.TestKey, nil), 404, "resource_not_found")
	if evs := e.payoutEvents(r.str("id")); len(evs) != 2 || evs[0] != domain.EventPayoutCreated || evs[1] != domain.EventWithdrawalCreated {
		t.Errorf("creation events: %v", evs)
	}
}

func testPayoutListAndCancel(t *testing.T, e *payEnv) {
	avail, _ := e.balance("BRL")
	var ids []string
	for _, key := range []string{"joana@example.com", "+5511987654321", "11.444.777/0001-61"} {
		r := e.postPayout(e.acct.TestKey, e.key(), map[string]any{"amount": 100, "destination": map[string]any{"pix_key": key}})
		e.want(r, 201, "")
		ids = append(ids, r.str("id"))
	}
	c := e.call("POST", "/payouts/"+ids[0]+"/cancel", e.acct.TestKey, nil)
	if c.Status != 200 || c.str("status") != "cancelled" || c.Body["cancelled_at"] == nil {
		t.Fatalf("cancel: %s", c.Raw)
	}
	e.want(e.call("POST", "/payouts/"+ids[0]+"/cancel", e.acct.TestKey, nil), 409, "payout_not_cancellable")
	e.want(e.call("POST", "/payouts/"+ids[0]+"/cancel", e.acct.LiveKey, nil), 404, "resource_not_found")
	if a, _ := e.balance("BRL"); a != avail-2*175 {
		t.Errorf("available after one cancel of three: %d, want %d", a, avail-2*175)
	}
	if evs := e.payoutEvents(ids[0]); len(evs) != 5 || evs[2] != domain.EventPayoutFailed || evs[3] != domain.EventWithdrawalFailed ||
		evs[4] != domain.EventWithdrawalStatusChanged {
		t.Errorf("cancel events: %v", evs)
	}

	page := e.call("GET", "/payouts?limit=2", e.acct.TestKey, nil)
	e.want(page, 200, "")
	data, _ := page.Body["data"].([]any)
	if page.str("object") != "list" || len(data) != 2 || page.Body["has_more"] != true || data[0].(map[string]any)["id"] != ids[2] {
		t.Fatalf("first page: %s", page.Raw)
	}
	next := page.str("next_cursor")
	rest := e.call("GET", "/payouts?limit=100&starting_after="+next, e.acct.TestKey, nil)
	data, _ = rest.Body["data"].([]any)
	if rest.Status != 200 || len(data) == 0 || data[0].(map[string]any)["id"] != ids[0] {
		t.Fatalf("next page: %s", rest.Raw)
	}
	cancelled := e.call("GET", "/payouts?status=cancelled", e.acct.TestKey, nil)
	data, _ = cancelled.Body["data"].([]any)
	if len(data) != 1 || data[0].(map[string]any)["id"] != ids[0] {
		t.Errorf("status filter: %s", cancelled.Raw)
	}
	for _, q := range []string{"status=done", "starting_after=ch_x", "limit=0", "page=2"} {
		r := e.call("GET", "/payouts?"+q, e.acct.TestKey, nil)
		if r.Status != 400 {
			t.Errorf("GET /payouts?%s: %d %s", q, r.Status, r.Raw)
		}
	}
	e.want(e.call("GET", "/payouts?starting_after="+ids[0], e.srv.NewAccount(t, "Terceira").TestKey, nil), 400, "parameter_invalid")
	if live := e.call("GET", "/payouts", e.acct.LiveKey, nil); live.Status != 200 || len(live.Body["data"].([]any)) != 0 {
		t.Errorf("live mode lists test payouts: %s", live.Raw)
	}
}

func testPayoutSendAndHelpers(t *testing.T, e *payEnv) {
	ctx := context.Background()
	avail, _ := e.balance("BRL")
	create := func(key string) string {
		r := e.postPayout(e.acct.TestKey, e.key(), map[string]any{"amount": 1000, "destination": map[string]any{"pix_key": key}})
		e.want(r, 201, "")
		return r.str("id")
	}
	paid, failed, bounced := create("123e4567-e89b-42d3-a456-426614174000"), create("52998224725"), create("invalid_key@sandbox.quita.dev")
	if _, err := e.srv.App.Payouts.SendPayouts(ctx); err != nil {
		t.Fatal(err)
	}
	g := e.call("GET", "/payouts/"+paid, e.acct.TestKey, nil)
	if g.str("status") != "processing" {
		t.Fatalf("sent payout: %s", g.Raw)
	}
	e.want(e.call("POST", "/payouts/"+paid+"/cancel", e.acct.TestKey, nil), 409, "payout_not_cancellable")
	// The documented failing key fails on its own, with its code.
	b := e.call("GET", "/payouts/"+bounced, e.acct.TestKey, nil)
	if b.str("status") != "failed" || b.str("failure_code") != "invalid_key" || b.str("failure_message") == "" || b.Body["failed_at"] == nil {
		t.Fatalf("payout to the failing test key: %s", b.Raw)
	}
	p := e.call("POST", "/test_helpers/payouts/"+paid+"/pay", e.acct.TestKey, nil)
	if p.Status != 200 || p.str("status") != "paid" || p.Body["paid_at"] == nil || !strings.HasPrefix(p.str("end_to_end_id"), "E99999999") {
		t.Fatalf("pay helper: %s", p.Raw)
	}
	e.want(e.call("POST", "/test_helpers/payouts/"+paid+"/fail", e.acct.TestKey, nil), 409, "payout_not_open")
	e.want(e.call("POST", "/test_helpers/payouts/"+failed+"/fail", e.acct.TestKey, map[string]any{"failure_code": "bounced"}), 400, "parameter_invalid")
	f := e.call("POST", "/test_helpers/payouts/"+failed+"/fail", e.acct.TestKey, map[string]any{"failure_code": "account_closed"})
	if f.Status != 200 || f.str("status") != "failed" || f.str("failure_code") != "account_closed" {
		t.Fatalf("fail helper: %s", f.Raw)
	}
	for _, path := range []string{"/test_helpers/payouts/" + paid + "/pay", "/test_helpers/payouts/" + failed + "/fail"} {
		e.want(e.call("POST", path, e.acct.LiveKey, nil), 404, "resource_not_found")
	}
	// Only the paid payout's amount and fee left; the failed ones came back.
	if a, _ := e.balance("BRL"); a != avail-1075 {
		t.Errorf("available %d, want %d", a, avail-1075)
	}
	if evs := e.payoutEvents(paid); len(evs) != 6 || evs[3] != domain.EventPayoutPaid || evs[4] != domain.EventWithdrawalCompleted {
		t.Errorf("paid payout events: %v", evs)
	}
}

// testPayoutConcurrentCreates races creates against the wallet over HTTP:
// the ones it covers succeed, the others are 422, none goes negative.
func testPayoutConcurrentCreates(t *testing.T, e *payEnv) {
	poor := e.srv.NewAccount(t, "Loja Concorrente")
	pr := e.call("POST", "/payments", poor.TestKey, map[string]any{"amount": 10000, "paymentMethods": []string{"PIX"}, "idempotencyKey": e.key()})
	e.want(pr, 201, "")
	e.want(e.call("POST", "/test_helpers/charges/"+pr.str("id")+"/pay", poor.TestKey, map[string]any{}), 200, "")
	// 9901 available; each payout takes 1000 (no fee for this account): 9 fit.
	const n = 24
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		codes    = map[int]int{}
		startKey = e.key()
	)
	for i := range n {
		wg.Go(func() {
			r := e.postPayout(poor.TestKey, startKey+"-"+string(rune('a'+i)), map[string]any{"amount": 1000,
				"destination": map[string]any{"pix_key": "52998224725"}})
			mu.Lock()
			codes[r.Status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[201] != 9 || codes[422] != n-9 {
		t.Errorf("status counts %v, want 9 created and %d refused", codes, n-9)
	}
	r := e.call("GET", "/wallets/balance?currency=BRL", poor.TestKey, nil)
	if r.num("available") != 901 {
		t.Errorf("available %d, want 901", r.num("available"))
	}
}
