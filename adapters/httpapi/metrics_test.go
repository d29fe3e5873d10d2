package httpapi_test

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/quitatest"
)

// /metrics counts requests by route template, never by raw path, so ids
// and keys cannot become labels.
func TestMetricsCountRoutesNotPaths(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	acct := srv.NewAccount(t, "Loja Métricas")
	req, _ := http.NewRequest(http.MethodGet, srv.BaseURL+"/charges/ch_aaaaaaaaaaaaaaaaaaaaaaaaaa", nil)
	req.Header.Set("apikey", acct.TestKey)
	for range 2 {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	resp, err := http.Get(srv.URL + "/no/such/path/ch_bbbbbbbbbbbbbbbbbbbbbbbbbb")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	resp, err = http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	body := string(b)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics = %d", resp.StatusCode)
	}
	for _, want := range []string{
		`quita_http_requests_total{code="404",method="GET",route="/v1/charges/{id}"} 2`,
		`quita_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
		`quita_http_request_duration_seconds_bucket{method="GET",route="/v1/charges/{id}",le="+Inf"} 2`,
		`go_goroutines`,
		// The payout worker's alerts (docs/payouts.md), none yet.
		`quita_payout_alerts_total{kind="blocked"} 0`,
		`quita_payout_alerts_total{kind="send_unresolved"} 0`,
		`quita_payout_alerts_total{kind="paid_after_release"} 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	for _, leak := range []string{"aaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbb", acct.TestKey, acct.AccountID} {
		if strings.Contains(body, leak) {
			t.Errorf("/metrics contains %q", leak)
		}
	}
}

// On Postgres, /metrics shows the create flight: every create is counted
// in a batch, and the flight's busy time grows with them (the operator's
// sign that the database's one write flight is saturated).
func TestMetricsShowTheCreateFlight(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{DatabaseURL: testenv.PostgresDSN(t)})
	acct := srv.NewAccount(t, "Loja Voo")
	const creates = 3
	for i := range creates {
		req, _ := http.NewRequest(http.MethodPost, srv.BaseURL+"/charges",
			strings.NewReader(`{"amount":1990,"currency":"BRL","payment_method":"pix"}`))
		req.Header.Set("apikey", acct.TestKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", fmt.Sprint("flight-", i))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("create: %d", resp.StatusCode)
		}
	}
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	got := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if ok && strings.HasPrefix(name, "quita_store_create_") {
			got[name], _ = strconv.ParseFloat(value, 64)
		}
	}
	if got["quita_store_create_batched_total"] != creates || got["quita_store_create_batches_total"] < 1 ||
		got["quita_store_create_batches_total"] > creates || got["quita_store_create_flight_seconds_total"] <= 0 {
		t.Fatalf("create flight series %v, want %d creates in 1..%d batches and some busy time", got, creates, creates)
	}
}
