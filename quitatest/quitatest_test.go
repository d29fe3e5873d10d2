package quitatest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/quitapix/quita/quitatest"
)

// The test kit serves the real API: a merchant creates and pays a charge.
func TestServerCreatesAndPaysACharge(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	acct := srv.NewAccount(t, "Loja Teste")

	req, _ := http.NewRequest(http.MethodPost, srv.BaseURL+"/charges", strings.NewReader(`{"amount":1500,"payment_method":"pix"}`))
	req.Header.Set("apikey", acct.TestKey)
	req.Header.Set("Idempotency-Key", "kit-test-0001")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var charge struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&charge); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %d %v", resp.StatusCode, err)
	}

	req, _ = http.NewRequest(http.MethodPost, srv.BaseURL+"/test_helpers/charges/"+charge.ID+"/pay", nil)
	req.Header.Set("apikey", acct.TestKey)
	resp2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp2.Body.Close()
	if err := json.NewDecoder(resp2.Body).Decode(&charge); err != nil || charge.Status != "paid" {
		t.Fatalf("pay: %d %+v %v", resp2.StatusCode, charge, err)
	}
}
