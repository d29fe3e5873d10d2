package e2e_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/quitatest"
)

// webhookReceiver records the deliveries it gets and checks each against
// the document's webhooks (canonical and legacy envelopes, headers).
type webhookReceiver struct {
	*httptest.Server
	mu    sync.Mutex
	types map[string]int
	errs  []error
	// secrets maps a path of the receiver to the secret its deliveries
	// must be signed with, as the document describes the two schemes.
	secrets map[string]string
}

// verifySignature checks X-Quita-Signature the way the document tells a
// merchant to, written out here rather than through domain's verifier.
func verifySignature(secret, header string, body []byte) error {
	mac := func(msg string) string {
		h := hmac.New(sha256.New, []byte(secret))
		h.Write([]byte(msg))
		return hex.EncodeToString(h.Sum(nil))
	}
	if v, ok := strings.CutPrefix(header, "sha256="); ok {
		if !hmac.Equal([]byte(v), []byte(mac(string(body)))) {
			return fmt.Errorf("legacy signature %q does not match", header)
		}
		return nil
	}
	ts, v1, ok := strings.Cut(header, ",v1=")
	ts, tok := strings.CutPrefix(ts, "t=")
	if !ok || !tok {
		return fmt.Errorf("signature %q is neither scheme", header)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		return fmt.Errorf("signature timestamp %q", ts)
	}
	if !hmac.Equal([]byte(v1), []byte(mac(ts+"."+string(body)))) {
		return fmt.Errorf("canonical signature %q does not match", header)
	}
	return nil
}

func (rc *webhookReceiver) setSecret(path, secret string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.secrets[path] = secret
}

func newWebhookReceiver(t *testing.T) *webhookReceiver {
	t.Helper()
	checker, err := contract()
	if err != nil {
		t.Fatal(err)
	}
	rc := &webhookReceiver{types: map[string]int{}, secrets: map[string]string{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		err := checker.checkWebhook(r, body)
		rc.mu.Lock()
		rc.types[r.Header.Get("X-Quita-Event-Type")]++
		if err != nil {
			rc.errs = append(rc.errs, err)
		}
		if secret, ok := rc.secrets[r.URL.Path]; !ok {
			rc.errs = append(rc.errs, fmt.Errorf("delivery to %s, which has no secret", r.URL.Path))
		} else if err := verifySignature(secret, r.Header.Get("X-Quita-Signature"), body); err != nil {
			rc.errs = append(rc.errs, fmt.Errorf("%s %s: %w", r.URL.Path, r.Header.Get("X-Quita-Event-Type"), err))
		}
		rc.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// waitFor waits until every event type in want was received.
func (rc *webhookReceiver) waitFor(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		rc.mu.Lock()
		missing := []string{}
		for _, w := range want {
			if rc.types[w] == 0 {
				missing = append(missing, w)
			}
		}
		got := fmt.Sprint(rc.types)
		errs := rc.errs
		rc.mu.Unlock()
		for _, err := range errs {
			t.Error(err)
		}
		if len(missing) == 0 || len(errs) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("webhooks %v never arrived (got %s)", missing, got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestEveryOperation calls every operation of api/openapi.yaml with valid
// requests (and the usual refusals), so the contract check sees each one's
// answers on both backends, and receives webhooks of both envelopes.
func TestEveryOperation(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		rc := newWebhookReceiver(t)
		e := newEnv(t, b, func(o *quitatest.Options) { o.DeliverWebhooks = true })
		email := fmt.Sprintf("tour-%d@quita.example.com", time.Now().UnixNano())
		acct, err := e.srv.App.Accounts.CreateAccount(context.Background(), app.NewAccountInput{
			Name: "Loja Tour", Email: email, Password: "tour-password-1", City: "SAO PAULO"})
		if err != nil {
			t.Fatal(err)
		}
		c, open := e.client(acct.TestKey), e.client("")
		ids := func(r *response, k string) string {
			t.Helper()
			var m map[string]any
			r.Decode(t, &m)
			s, _ := m[k].(string)
			if s == "" {
				t.Fatalf("no %s in %s", k, r.Body)
			}
			return s
		}

		// Open routes.
		open.do(t, "GET", "/openapi.json", nil, nil).want(t, 200)
		open.do(t, "GET", "/webhooks/event-catalog", nil, nil).want(t, 200)
		open.do(t, "GET", "/charges", nil, nil).apiErr(t, 401, "api_key_missing", "")

		// Webhook endpoints.
		ep := c.do(t, "POST", "/webhooks/endpoints", map[string]any{"url": rc.URL + "/hooks",
			"events": []string{"charge.created", "charge.paid", "charge.expired", "charge.failed", "charge.refunded",
				"payout.created", "payout.paid", "payout.failed", "withdrawal.created", "withdrawal.completed", "withdrawal.failed",
				"payment.created", "payment.completed", "payment.refunded", "payment.failed", "payment.status_changed"}}, nil).want(t, 201)
		epID := ids(ep, "id")
		c.do(t, "GET", "/webhooks/endpoints", nil, nil).want(t, 200)
		c.do(t, "PATCH", "/webhooks/endpoints/"+epID, map[string]any{"status": "ACTIVE"}, nil).want(t, 200)
		c.do(t, "POST", "/webhooks/endpoints/"+epID+"/rotate-secret", map[string]any{"id": epID}, nil).want(t, 200)
		rc.setSecret("/hooks", ids(c.do(t, "POST", "/webhooks/endpoints/"+epID+"/rotate-secret", nil, nil).want(t, 200), "secret"))
		c.do(t, "POST", "/webhooks/endpoints", map[string]any{"url": rc.URL, "events": []string{"charge.nope"}}, nil).
			apiErr(t, 400, "", "events[0]")
		rc.setSecret("/tx", ids(c.do(t, "POST", "/webhooks/transaction-secret/rotate", nil, nil).want(t, 200), "transactionWebhookSecret"))

		// Charges.
		full := map[string]any{"amount": 2500, "currency": "BRL", "payment_method": "pix", "description": "Pedido 1",
			"expires_in": 600, "customer": map[string]any{"name": "Maria Silva", "document": "52998224725",
				"email": "maria@example.com", "phone": "+5511999990000"},
			"expected_payer_tax_id": "52998224725", "metadata": map[string]any{"order": 1, "tag": "x"}}
		key := newKey()
		ch := c.do(t, "POST", "/charges", full, hdr{"Idempotency-Key": key}).want(t, 201).charge(t)
		if r := c.do(t, "POST", "/charges", full, hdr{"Idempotency-Key": key}).want(t, 201); r.Header.Get("Idempotent-Replayed") != "true" {
			t.Error("no Idempotent-Replayed on a replay")
		}
		c.do(t, "POST", "/charges", pixBody(1), hdr{"Idempotency-Key": key}).apiErr(t, 409, "idempotency_key_reused", "")
		c.create(t, "/pix/charges", map[string]any{"amount": 700}).want(t, 201)
		c.do(t, "GET", "/charges/"+ch.ID+"?include=qr_code_base64", nil, nil).want(t, 200)
		c.do(t, "GET", "/charges/tx_"+ch.raw(), nil, nil).want(t, 200)
		c.do(t, "GET", "/charges?limit=2&status=pending&customer_id=52998224725", nil, nil).want(t, 200)
		c.pay(t, ch.ID, map[string]any{"payer_document": "52998224725", "payer_name": "Maria Silva"}).want(t, 200)
		c.pay(t, ch.ID, nil).apiErr(t, 409, "charge_not_pending", "")
		// A due-date charge: its amount on a day, its terms revised.
		dueDay := time.Now().In(time.FixedZone("BRT", -3*60*60)).AddDate(0, 0, 10).Format(time.DateOnly) // Brasília keeps no summer time
		due := c.do(t, "POST", "/charges", map[string]any{"amount": 5000, "payment_method": "pix", "due_date": dueDay,
			"customer": map[string]any{"name": "Maria Silva", "document": "52998224725"},
			"fine":     map[string]any{"type": "fixed", "amount": 100}, "interest": map[string]any{"type": "amount_per_day", "amount": 5}},
			hdr{"Idempotency-Key": newKey()}).want(t, 201).charge(t)
		c.do(t, "GET", "/charges/"+due.ID+"/amount_due?date="+dueDay, nil, nil).want(t, 200)
		c.do(t, "POST", "/charges/"+due.ID, map[string]any{"days_after_due": 10, "interest": nil,
			"fine": map[string]any{"type": "percent", "rate": "2.00"}}, hdr{"Idempotency-Key": newKey()}).want(t, 200)
		c.do(t, "POST", "/charges/"+ch.ID, map[string]any{"days_after_due": 10}, nil).apiErr(t, 422, "charge_not_due_date", "")
		// A batch of due-date charges: one created, one refused.
		batchDue := domain.BrasiliaDate(time.Now()).AddDays(10).String()
		dueCharge := map[string]any{"amount": 4500, "payment_method": "pix", "due_date": batchDue,
			"customer": map[string]any{"name": "Maria Silva", "document": "52998224725"}}
		batch := c.do(t, "POST", "/charges/batch", map[string]any{"charges": []any{dueCharge, pixBody(100)}},
			hdr{"Idempotency-Key": newKey()}).want(t, 202)
		e.srv.App.Charges.WaitBackground()
		c.do(t, "GET", "/charges/batch/"+ids(batch, "id"), nil, nil).want(t, 200)
		c.do(t, "POST", "/charges/batch", map[string]any{"charges": []any{}}, hdr{"Idempotency-Key": newKey()}).
			apiErr(t, 400, "parameter_invalid", "charges")
		exp := c.mustCreate(t, pixBody(800))
		c.do(t, "POST", "/test_helpers/charges/"+exp.ID+"/expire", nil, nil).want(t, 200)
		e.client(acct.LiveKey).do(t, "POST", "/test_helpers/charges/"+exp.ID+"/expire", nil, nil).apiErr(t, 404, "resource_not_found", "")

		// Payments.
		pay := func(body map[string]any) string {
			t.Helper()
			body["idempotencyKey"] = newKey()
			return ids(c.do(t, "POST", "/payments", body, nil).want(t, 201), "id")
		}
		tx := pay(map[string]any{"amount": 10000, "currency": "BRL", "paymentMethods": []string{"PIX"},
			"customerId": "user-42", "customerName": "Joao", "customerEmail": "joao@example.com",
			"customerDocument": "52998224725", "metadata": map[string]any{"k": "v"}, "webhookUrl": rc.URL + "/tx"})
		c.do(t, "GET", "/payments/"+tx, nil, nil).want(t, 200)
		c.do(t, "GET", "/payments/"+tx+"/receipt", nil, nil).apiErr(t, 422, "receipt_unavailable", "")
		c.pay(t, tx, nil).want(t, 200)
		c.do(t, "POST", "/payments/"+tx+"/cancel", nil, nil).apiErr(t, 409, "charge_not_cancellable", "")
		refund := c.do(t, "POST", "/payments/"+tx+"/refund", map[string]any{"idempotencyKey": newKey(), "amount": 1000,
			"reason": "parcial", "strategy": "devolution"}, nil).want(t, 201)
		c.do(t, "POST", "/payments/"+tx+"/refund", map[string]any{"idempotencyKey": newKey(), "amount": 100000}, nil).
			apiErr(t, 400, "refund_exceeds_amount", "amount")
		c.do(t, "POST", "/test_helpers/refunds/"+ids(refund, "id")+"/fail", nil, nil)
		c.do(t, "GET", "/payments/"+tx+"/refunds", nil, nil).want(t, 200)
		c.do(t, "GET", "/payments/"+tx+"/receipt", nil, nil).want(t, 200)
		c.do(t, "GET", "/payments/"+tx+"/receipt?lang=en", nil, nil).want(t, 200)
		c.do(t, "GET", "/payments/"+tx+"/receipt?lang=fr", nil, nil).apiErr(t, 400, "parameter_invalid", "lang")
		c.do(t, "GET", "/payments/"+tx+"/refunds/"+ids(refund, "id")+"/receipt", nil, nil).apiErr(t, 422, "receipt_unavailable", "")
		c.do(t, "GET", "/payments/"+tx+"/provider-status", nil, nil).want(t, 200)
		c.do(t, "POST", "/payments/"+tx+"/resend-webhook", nil, nil).want(t, 200)
		card := pay(map[string]any{"amount": 5000, "paymentMethods": []string{"CREDIT_CARD"},
			"metadata": map[string]any{"returnUrl": "https://shop.example.com/back"}})
		c.do(t, "POST", "/test_helpers/payments/"+card+"/transition", map[string]any{"status": "APPROVED", "paidWith": "CREDIT_CARD"}, nil).want(t, 200)
		c.do(t, "POST", "/test_helpers/payments/"+card+"/transition", map[string]any{"status": "WAITING_PAYMENT"}, nil).
			apiErr(t, 409, "invalid_transition", "")
		for _, m := range []map[string]any{
			{"amount": 3000, "paymentMethods": []string{"BOLETO"}, "customerName": "Ana", "customerDocument": "52998224725"},
			{"amount": 3000, "currency": "EUR", "paymentMethods": []string{"MULTIBANCO"}},
			{"amount": 3000, "currency": "EUR", "paymentMethods": []string{"MBWAY"}, "metadata": map[string]any{"phone": "+351912345678"}},
			{"amount": 3000, "currency": "USDT", "paymentMethods": []string{"CRYPTO"}},
		} {
			id := pay(m)
			e.srv.App.Charges.WaitBackground()
			c.do(t, "GET", "/payments/"+id, nil, nil).want(t, 200)
		}
		cancel := pay(map[string]any{"amount": 1500, "paymentMethods": []string{"PIX"}})
		c.do(t, "POST", "/payments/"+cancel+"/cancel", nil, nil).want(t, 200)
		c.do(t, "GET", "/payments?page=1&limit=5&status=PAID&sortBy=amount&sortOrder=asc&startDate=2020-01-01&endDate="+
			time.Now().UTC().Add(time.Hour).Format(time.RFC3339), nil, nil).want(t, 200)
		c.do(t, "GET", "/payments?sortBy=nope", nil, nil).apiErr(t, 400, "", "sortBy")
		c.do(t, "GET", "/payments/stats?days=30", nil, nil).want(t, 200)
		c.do(t, "GET", "/payments/metrics?days=30&currency=BRL", nil, nil).want(t, 200)
		c.do(t, "GET", "/payments/metrics", nil, nil).want(t, 200)
		c.do(t, "GET", "/payments/tx_"+strings.Repeat("a", 26), nil, nil).apiErr(t, 404, "resource_not_found", "")

		// Wallets.
		c.do(t, "GET", "/wallets", nil, nil).want(t, 200)
		c.do(t, "GET", "/wallets/balance", nil, nil).want(t, 200)
		c.do(t, "GET", "/wallets/balance?currency=BRL", nil, nil).want(t, 200)

		// Payouts (from the Pix payment's net above).
		payout := func() string {
			t.Helper()
			return ids(c.do(t, "POST", "/payouts", map[string]any{"amount": 1000, "description": "saque",
				"destination": map[string]any{"pix_key": "529.982.247-25"}, "metadata": map[string]any{"k": "v"}},
				hdr{"Idempotency-Key": newKey()}).want(t, 201), "id")
		}
		po := payout()
		c.do(t, "GET", "/payouts/"+po, nil, nil).want(t, 200)
		c.do(t, "GET", "/payouts?limit=10&status=pending", nil, nil).want(t, 200)
		c.do(t, "GET", "/payouts/"+po+"/receipt", nil, nil).apiErr(t, 422, "receipt_unavailable", "")
		c.do(t, "POST", "/test_helpers/payouts/"+po+"/pay", nil, nil).want(t, 200)
		c.do(t, "GET", "/payouts/"+po+"/receipt?lang=en", nil, nil).want(t, 200)
		c.do(t, "POST", "/payouts/"+po+"/cancel", nil, nil).apiErr(t, 409, "payout_not_cancellable", "")
		c.do(t, "POST", "/payouts/"+payout()+"/cancel", nil, nil).want(t, 200)
		c.do(t, "POST", "/test_helpers/payouts/"+payout()+"/fail", map[string]any{"failure_code": "account_closed"}, nil).want(t, 200)
		c.do(t, "POST", "/payouts", map[string]any{"amount": 100000000, "destination": map[string]any{"pix_key": "joana@example.com"}},
			hdr{"Idempotency-Key": newKey()}).apiErr(t, 422, "insufficient_balance", "amount")
		c.do(t, "POST", "/payouts", map[string]any{"amount": 100, "destination": map[string]any{"pix_key": "nope"}},
			hdr{"Idempotency-Key": newKey()}).apiErr(t, 400, "parameter_invalid", "destination.pix_key")
		e.client(acct.LiveKey).do(t, "POST", "/test_helpers/payouts/"+po+"/pay", nil, nil).apiErr(t, 404, "resource_not_found", "")

		// Deliveries, once both envelopes arrived.
		rc.waitFor(t, "charge.created", "charge.paid", "payment.created", "payment.completed", "payment.refunded", "charge.expired",
			"payout.created", "payout.paid", "payout.failed", "withdrawal.created", "withdrawal.completed", "withdrawal.failed")
		c.do(t, "GET", "/webhooks/deliveries?limit=100", nil, nil).want(t, 200)
		c.do(t, "GET", "/webhooks/deliveries?status=DELIVERED&eventType=charge.paid&endpointId="+epID+"&offset=0", nil, nil).want(t, 200)
		c.do(t, "GET", "/webhooks/stats", nil, nil).want(t, 200)
		c.do(t, "DELETE", "/webhooks/endpoints/"+epID, nil, nil).want(t, 200)
		c.do(t, "DELETE", "/webhooks/endpoints/"+epID, nil, nil).apiErr(t, 404, "resource_not_found", "")

		// Events.
		var evs struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		c.do(t, "GET", "/events?limit=5&type=charge.*,payment.created", nil, nil).want(t, 200).Decode(t, &evs)
		if len(evs.Data) == 0 {
			t.Fatal("no events listed")
		}
		c.do(t, "GET", "/events/"+evs.Data[0].ID, nil, nil).want(t, 200)
		c.do(t, "GET", "/events?wait=0s&ending_before="+evs.Data[0].ID, nil, nil).want(t, 200)
		c.do(t, "GET", "/events/evt_"+strings.Repeat("a", 26), nil, nil).apiErr(t, 404, "resource_not_found", "")

		// Dashboard.
		open.do(t, "POST", "/auth/login", map[string]any{"email": email, "password": "wrong-password"}, nil).
			apiErr(t, 401, "invalid_credentials", "")
		var sess struct {
			Token string `json:"token"`
		}
		open.do(t, "POST", "/auth/login", map[string]any{"email": email, "password": "tour-password-1"}, nil).want(t, 200).Decode(t, &sess)
		bearer := hdr{"Authorization": "Bearer " + sess.Token}
		issued := open.do(t, "POST", "/api-keys", map[string]any{"label": "ci", "test": true}, bearer).want(t, 201)
		open.do(t, "POST", "/api-keys", nil, bearer).want(t, 201)
		open.do(t, "GET", "/api-keys", nil, bearer).want(t, 200)
		rotated := open.do(t, "POST", "/api-keys/"+ids(issued, "id")+"/rotate", map[string]any{"label": "ci-2"}, bearer).want(t, 201)
		open.do(t, "POST", "/api-keys/"+ids(issued, "id")+"/rotate", nil, bearer).apiErr(t, 409, "api_key_revoked", "")
		open.do(t, "DELETE", "/api-keys/"+ids(rotated, "id"), nil, bearer).want(t, 200)
		open.do(t, "GET", "/audit-logs?limit=10", nil, bearer).want(t, 200)
		var fp struct {
			Fingerprint string `json:"fingerprint"`
		}
		issued.Decode(t, &fp)
		open.do(t, "GET", "/request-logs?limit=10&apiKeyFingerprint="+fp.Fingerprint, nil, bearer).want(t, 200)
		open.do(t, "GET", "/request-logs", nil, bearer).want(t, 200)
		c.do(t, "GET", "/api-keys", nil, nil).apiErr(t, 403, "api_key_not_allowed", "")
		open.do(t, "POST", "/auth/logout", nil, bearer).want(t, 204)
		open.do(t, "GET", "/api-keys", nil, bearer).apiErr(t, 401, "token_invalid", "")

		// The PSP callback: an unknown account and token.
		r := open.do(t, "POST", "/providers/bcbpix/"+acct.AccountID+"/not-the-token/pix", map[string]any{"pix": []any{}}, nil)
		if r.Status != 404 {
			t.Errorf("callback with a wrong token: %d %s", r.Status, r.Body)
		}
	})
}
