package checkout_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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

// call sends a JSON request with the test key and decodes a charge.
func call(t testing.TB, method, url, key string, body any, want int) apiCharge {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("apikey", key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", fmt.Sprintf("checkout-test-%08d", idemSeq.Add(1)))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, url, res.StatusCode, want, raw)
	}
	var c apiCharge
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
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

func fetch(t testing.TB, url string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
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

// doJSON sends a JSON request with the key and decodes the answer into out.
func doJSON(t testing.TB, method, url, key string, body, out any, want int) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("apikey", key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		t.Fatalf("%s %s: %d, want %d: %s", method, url, res.StatusCode, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("decode %s: %v", raw, err)
		}
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
