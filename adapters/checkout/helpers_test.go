package checkout_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/quitatest"
)

// apiCharge is the part of the public Charge the tests read.
type apiCharge struct {
	ID          string `json:"id"`
	Status      string `json:"status"`
	CheckoutURL string `json:"checkout_url"`
	Pix         struct {
		BRCode    string `json:"br_code"`
		QRCodeURL string `json:"qr_code_url"`
		TxID      string `json:"txid"`
		ExpiresAt string `json:"expires_at"`
	} `json:"pix"`
}

var idemSeq atomic.Int64

// call sends a JSON request with the test key and a fresh Idempotency-Key
// and decodes a charge.
func call(t testing.TB, method, url, key string, body any, want int) apiCharge {
	t.Helper()
	var c apiCharge
	doJSON(t, method, url, key, body, &c, want, "Idempotency-Key", fmt.Sprintf("checkout-test-%08d", idemSeq.Add(1)))
	return c
}

func createCharge(t testing.TB, srv *quitatest.Server, key string, body map[string]any) apiCharge {
	t.Helper()
	return call(t, http.MethodPost, srv.BaseURL+"/charges", key, body, http.StatusCreated)
}

func payCharge(t testing.TB, srv *quitatest.Server, key, id string, body map[string]any) apiCharge {
	t.Helper()
	return call(t, http.MethodPost, srv.BaseURL+"/test_helpers/charges/"+id+"/pay", key, body, http.StatusOK)
}

func expireCharge(t testing.TB, srv *quitatest.Server, key, id string) apiCharge {
	t.Helper()
	return call(t, http.MethodPost, srv.BaseURL+"/test_helpers/charges/"+id+"/expire", key, nil, http.StatusOK)
}

// fetch GETs url with the header name/value pairs.
func fetch(t testing.TB, url string, header ...string) (*testkit.Response, string) {
	t.Helper()
	h := testkit.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h[header[i]] = header[i+1]
	}
	r := testkit.Do(t, http.MethodGet, url, nil, h)
	return r, string(r.Body)
}

// apiPayment is the part of the transaction read format the tests read.
type apiPayment struct {
	ID              string  `json:"id"`
	Status          string  `json:"status"`
	CardRedirectURL *string `json:"cardRedirectUrl"`
	BoletoLine      *string `json:"boletoLine"`
	BoletoBarcode   *string `json:"boletoBarcode"`
	MBEntity        *string `json:"mbEntity"`
	MBReference     *string `json:"mbReference"`
	CryptoAddress   *string `json:"cryptoAddress"`
	CryptoAmount    *string `json:"cryptoAmount"`
	CryptoCurrency  *string `json:"cryptoCurrency"`
}

// doJSON sends a JSON request with the key (and the header name/value
// pairs) and decodes the answer into out.
func doJSON(t testing.TB, method, url, key string, body, out any, want int, header ...string) {
	t.Helper()
	h := testkit.Header{"apikey": key, "Content-Type": "application/json"}
	for i := 0; i+1 < len(header); i += 2 {
		h[header[i]] = header[i+1]
	}
	r := testkit.Do(t, method, url, body, h)
	if r.Status != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, url, r.Status, want, r.Body)
	}
	if out != nil {
		r.Decode(t, out)
	}
}

// createPayment creates a payment on the payments surface, waits until
// its method data is filled (the spec allows up to 3 s) and returns the
// read format and the charge (for its checkout_url).
func createPayment(t testing.TB, srv *quitatest.Server, key string, body map[string]any) (apiPayment, apiCharge) {
	t.Helper()
	body["idempotencyKey"] = fmt.Sprintf("checkout-pay-%08d", idemSeq.Add(1))
	var created apiPayment
	doJSON(t, http.MethodPost, srv.BaseURL+"/payments", key, body, &created, http.StatusCreated)
	raw := strings.TrimPrefix(created.ID, "tx_")
	var p apiPayment
	deadline := time.Now().Add(3 * time.Second)
	for {
		doJSON(t, http.MethodGet, srv.BaseURL+"/payments/"+created.ID, key, nil, &p, http.StatusOK)
		if p.BoletoLine != nil || p.MBReference != nil || p.CryptoAddress != nil || p.CardRedirectURL != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	ch := call(t, http.MethodGet, srv.BaseURL+"/charges/ch_"+raw, key, nil, http.StatusOK)
	return p, ch
}
