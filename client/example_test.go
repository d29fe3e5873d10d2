package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/client"
	"github.com/quitapix/quita/quitatest"
)

// The examples run against a real Quita (quitatest: the whole API on an
// in-memory database) whose address and test key are these.
var baseURL, apiKey string

func TestMain(m *testing.M) {
	srv, err := quitatest.Start(quitatest.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	baseURL, apiKey = srv.BaseURL, srv.Account().TestKey
	code := m.Run()
	srv.Close()
	os.Exit(code)
}

// Create a Pix charge, then pay it as the sandbox bank would (test mode).
func Example() {
	ctx := context.Background()
	qc := client.New(baseURL, apiKey) // e.g. "http://127.0.0.1:8080/v1", "qt_test_..."

	ch, err := qc.Charges.Create(ctx, client.ChargeParams{
		Amount:      1990, // R$ 19,90 in centavos
		Description: "Pedido 1001",
		Customer:    &client.Customer{Name: "Maria Silva"},
		// Only this CPF may pay; anyone else's money is returned.
		ExpectedPayerTaxID: "529.982.247-25",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ch.Status, ch.Amount, ch.Pix.BRCode != "", strings.HasPrefix(ch.ID, "ch_"))

	ch, err = qc.TestHelpers.PayCharge(ctx, ch.ID, client.PayParams{PayerDocument: "52998224725"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ch.Status, ch.Settlement.EndToEndID != "")
	// Output:
	// pending 1990 true true
	// paid true
}

// Every error of the API is an *client.Error with the envelope's fields.
func ExampleError() {
	qc := client.New(baseURL, apiKey)
	_, err := qc.Charges.Create(context.Background(), client.ChargeParams{Amount: -5})

	var e *client.Error
	if errors.As(err, &e) {
		fmt.Println(e.HTTPStatus, e.Type, e.Code, e.Param, strings.HasPrefix(e.RequestID, "req_"))
	}
	fmt.Println(errors.Is(err, client.ErrInvalidRequest))
	// Output:
	// 400 invalid_request_error parameter_invalid amount true
	// true
}

// List follows the cursor: the loop sees every charge, page after page.
func ExampleChargesService_List() {
	ctx := context.Background()
	qc := client.New(baseURL, apiKey)
	for _, amount := range []int64{100, 200, 300} {
		if _, err := qc.Charges.Create(ctx, client.ChargeParams{Amount: amount, Metadata: map[string]any{"example": "list"}}); err != nil {
			fmt.Println(err)
			return
		}
	}

	var total int64
	for ch, err := range qc.Charges.List(ctx, client.ChargeListParams{Limit: 2, Status: client.ChargePending}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if ch.Metadata["example"] == "list" {
			total += ch.Amount
		}
	}
	fmt.Println(total)
	// Output: 600
}

// Verify a delivery and decode its event, in a webhook handler. During a
// secret rotation pass both secrets. (The verifier's clock is pinned
// here because the request is a recorded one.)
func ExampleWebhookVerifier_Parse() {
	const secret = "4f1c2b6e8a9d0e3f5a7b9c1d2e4f6a8b0c2d4e6f8a0b1c3d5e7f9a1b3c5d7e9f"
	body := `{"id":"evt_abc","object":"event","api_version":"2026-11-01","type":"charge.paid","created_at":"2026-11-01T00:00:00.000Z","data":{"object":{"id":"ch_x","object":"charge","amount":1990}}}`
	r := httptest.NewRequest("POST", "/hooks/quita", strings.NewReader(body))
	r.Header.Set(client.SignatureHeader, "t=1793491200,v1=53c10aeaca6d78085b2499c783e11690132a87755e7dc17ed63e54bbbeebfc70")

	v := client.WebhookVerifier{
		Secrets: []string{secret},
		Now:     func() time.Time { return time.Unix(1793491210, 0) },
	}
	ev, err := v.Parse(r) // in a handler: client.ParseWebhook(r, secret, oldSecret)
	if err != nil {
		fmt.Println("reject with 400:", err)
		return
	}
	ch, _ := ev.Charge()
	fmt.Println(ev.ID, ev.Type, ch.ID, ch.Amount)

	// A body changed in transit (or forged) is refused.
	r = httptest.NewRequest("POST", "/hooks/quita", strings.NewReader(strings.Replace(body, "1990", "19900", 1)))
	r.Header.Set(client.SignatureHeader, "t=1793491200,v1=53c10aeaca6d78085b2499c783e11690132a87755e7dc17ed63e54bbbeebfc70")
	_, err = v.Parse(r)
	fmt.Println(errors.Is(err, client.ErrSignatureMismatch))
	// Output:
	// evt_abc charge.paid ch_x 1990
	// true
}

// Refund part of a paid payment (the transaction wire format).
func ExamplePaymentsService_Refund() {
	ctx := context.Background()
	qc := client.New(baseURL, apiKey)
	p, err := qc.Payments.Create(ctx, client.PaymentParams{Amount: 5000, PaymentMethods: []string{client.MethodPix}})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := qc.TestHelpers.PayCharge(ctx, p.ID, client.PayParams{}); err != nil {
		fmt.Println(err)
		return
	}
	rf, err := qc.Payments.Refund(ctx, p.ID, client.RefundParams{Amount: 1000, Reason: "item out of stock"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rf.Status, rf.Amount, rf.TransactionID == p.ID)
	// Output: PENDING 1000 true
}
