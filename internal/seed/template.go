// Package seed fills a fresh Postgres database with a large, realistic
// history (quitabench -seed): charges over many accounts and months with
// their events, deliveries, refunds, payouts, ledger and request logs.
//
// The rows are the application's own: a template account runs a handful
// of charges through the real server (create, pay, refund, cancel, a
// payout, webhook deliveries to a local receiver), and every row those
// left behind is then copied many times with COPY, each copy under fresh
// ids of its own time and shifted timestamps. The derived state — the
// charge counters, the per-day totals and the wallets — is rebuilt from
// the copied rows at the end, so `quitad ledger verify` passes.
package seed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/cmd/wiring"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// unitKind names what a template unit is.
type unitKind int

const (
	unitPaid unitKind = iota
	unitRefunded
	unitCancelled
	unitPayout
)

// unit is one template: a charge (or a payout) the real server made, and
// the wall-clock window its requests ran in (its request logs).
type unit struct {
	kind       unitKind
	root       string // the charge's or the payout's raw id
	start, end time.Time
}

// templates is what the template account left: its units and the
// account's own rows' ids.
type templates struct {
	accountID string
	testKey   string
	units     []unit
}

type apiClient struct {
	base, key string
	http      *http.Client
	seq       int
}

func (c *apiClient) call(method, path string, body any) (map[string]any, error) {
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, c.base+path, rd)
	req.Header.Set("apikey", c.key)
	req.Header.Set("Content-Type", "application/json")
	if method == http.MethodPost {
		c.seq++
		req.Header.Set("Idempotency-Key", fmt.Sprintf("seed-%d-%d", time.Now().UnixNano(), c.seq))
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &out)
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s %s: status %d: %s", method, path, resp.StatusCode, raw)
	}
	return out, nil
}

// makeTemplates runs the template account's charges through the real
// server on dsn, waits until the workers have settled everything (refunds
// refunded, payouts paid, deliveries delivered, counters folded), and
// stops the server.
func makeTemplates(ctx context.Context, dsn string) (*templates, error) {
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	defer receiver.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	origin := "http://" + ln.Addr().String()
	cfg := wiring.Config{
		DatabaseURL: dsn, BaseURL: origin + "/v1", CheckoutURLBase: origin + "/checkout",
		PixFees:             domain.FeeSchedule{Provider: domain.Fee{BPS: 50}, Platform: domain.Fee{BPS: 49}},
		WebhookAllowPrivate: true,
	}
	runCtx, cancel := context.WithCancel(ctx)
	a, cleanup, err := wiring.InitializeApp(runCtx, cfg, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		cancel()
		ln.Close()
		return nil, err
	}
	srv := &http.Server{Handler: a.Handler}
	go srv.Serve(ln)
	done := make(chan struct{}, 2)
	go func() { a.Workers.Run(runCtx); done <- struct{}{} }()
	go func() { a.Webhooks.Run(runCtx); done <- struct{}{} }()
	stop := func() {
		cancel()
		<-done
		<-done
		srv.Close()
		cleanup()
	}
	t, err := runTemplates(ctx, a, origin+"/v1", receiver.URL)
	if err == nil {
		err = settle(ctx, dsn)
	}
	stop()
	return t, err
}

func runTemplates(ctx context.Context, a *wiring.App, base, receiver string) (*templates, error) {
	acct, err := a.Accounts.CreateAccount(ctx, app.NewAccountInput{Name: "Seed Template", Email: "seed-template@example.com", Password: "seed-password-1"})
	if err != nil {
		return nil, err
	}
	if err := a.Dashboard.GuardSettings.Set(ctx, acct.AccountID, ports.AccountSettings{RateLimitPerSecond: 1_000_000, RateLimitBurst: 1_000_000}); err != nil {
		return nil, err
	}
	c := &apiClient{base: base, key: acct.TestKey, http: &http.Client{Timeout: 30 * time.Second}}
	if err := subscribeAll(c, receiver+"/hook"); err != nil {
		return nil, err
	}
	t := &templates{accountID: acct.AccountID, testKey: acct.TestKey}
	add := func(kind unitKind, amount int64) error {
		u := unit{kind: kind, start: time.Now()}
		ch, err := c.call(http.MethodPost, "/charges", map[string]any{
			"amount": amount, "payment_method": "pix", "description": "Pedido " + fmt.Sprint(amount),
			"customer": map[string]any{"name": "Maria Silva", "email": "maria@example.com"},
			"metadata": map[string]any{"order": fmt.Sprint(len(t.units))},
		})
		if err != nil {
			return err
		}
		id, _ := ch["id"].(string)
		u.root = id[len(domain.PrefixCharge):]
		if _, err := c.call(http.MethodGet, "/charges/"+id, nil); err != nil {
			return err
		}
		switch kind {
		case unitCancelled:
			_, err = c.call(http.MethodPost, "/payments/"+u.root+"/cancel", map[string]any{})
		default:
			_, err = c.call(http.MethodPost, "/test_helpers/charges/"+id+"/pay", map[string]any{})
		}
		if err == nil && kind == unitRefunded {
			_, err = c.call(http.MethodPost, "/payments/"+u.root+"/refund",
				map[string]any{"amount": amount / 2, "strategy": "devolution"}) // its key: the call's Idempotency-Key header
		}
		u.end = time.Now()
		t.units = append(t.units, u)
		return err
	}
	for _, amount := range []int64{1990, 4990, 12900, 25000, 7350, 99900, 3500} {
		if err := add(unitPaid, amount); err != nil {
			return nil, err
		}
	}
	for _, amount := range []int64{5990, 15000} {
		if err := add(unitRefunded, amount); err != nil {
			return nil, err
		}
	}
	for _, amount := range []int64{2990, 8000} {
		if err := add(unitCancelled, amount); err != nil {
			return nil, err
		}
	}
	u := unit{kind: unitPayout, start: time.Now()}
	po, err := c.call(http.MethodPost, "/payouts", map[string]any{"amount": 10000,
		"destination": map[string]any{"pix_key": "payout@example.com"}, "description": "Repasse"})
	if err != nil {
		return nil, err
	}
	id, _ := po["id"].(string)
	if _, err := c.call(http.MethodPost, "/test_helpers/payouts/"+id+"/pay", map[string]any{}); err != nil {
		return nil, err
	}
	u.root, u.end = id[len(domain.PrefixPayout):], time.Now()
	t.units = append(t.units, u)
	return t, nil
}

// settle waits until nothing the template account started is still in
// flight: no refund or payout open, no delivery pending, no event in the
// outbox, no counter delta unfolded.
func settle(ctx context.Context, dsn string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	const open = `SELECT
	  (SELECT count(*) FROM refunds WHERE status NOT IN ('REFUNDED', 'FAILED'))
	+ (SELECT count(*) FROM payouts WHERE status IN ('pending', 'processing'))
	+ (SELECT count(*) FROM webhook_deliveries WHERE status IN ('PENDING', 'PROCESSING'))
	+ (SELECT count(*) FROM event_outbox)
	+ (SELECT count(*) FROM charge_stat_deltas)`
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var n int64
		if err := conn.QueryRow(ctx, open).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			// The access log is written every 250 ms.
			time.Sleep(time.Second)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("template rows still in flight after 2 minutes (%d)", n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// subscribeAll registers an endpoint at url for every canonical event of
// the catalog.
func subscribeAll(c *apiClient, url string) error {
	req, _ := http.NewRequest(http.MethodGet, c.base+"/webhooks/event-catalog", nil)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var catalog []struct {
		Event  string `json:"event"`
		Legacy bool   `json:"legacy"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&catalog); err != nil {
		return err
	}
	var events []string
	for _, e := range catalog {
		if !e.Legacy {
			events = append(events, e.Event)
		}
	}
	_, err = c.call(http.MethodPost, "/webhooks/endpoints", map[string]any{"url": url, "events": events})
	return err
}
