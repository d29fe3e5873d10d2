package checkout_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

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
