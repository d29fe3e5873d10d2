package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/quitatest"
)

// payDialects runs a test on SQLite and on Postgres.
var payDialects = []struct {
	name string
	dsn  func(testing.TB) string
}{
	{"sqlite", testenv.SQLiteDSN},
	{"postgres", testenv.PostgresDSN},
}

type payEnv struct {
	t     testing.TB
	srv   *quitatest.Server
	clock *quitatest.Clock
	acct  quitatest.Account
	seq   int
	mu    sync.Mutex
}

func newPayEnv(t testing.TB, dsn string) *payEnv {
	t.Helper()
	clock := quitatest.NewClock()
	srv := quitatest.NewServer(t, quitatest.Options{DatabaseURL: dsn, Clock: clock})
	return &payEnv{t: t, srv: srv, clock: clock, acct: srv.NewAccount(t, "Loja Pagamentos")}
}

type payResp = apiResp

func (e *payEnv) call(method, path, key string, body any) payResp {
	e.t.Helper()
	return apiCall(e.t, method, e.srv.BaseURL+path, key, body)
}

func (e *payEnv) key() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seq++
	return fmt.Sprintf("idem-key-%08d", e.seq)
}

func (e *payEnv) want(r payResp, status int, code string) {
	e.t.Helper()
	wantStatus(e.t, r, status, code)
}

// create makes a payment and returns its tx_ id.
func (e *payEnv) create(amount int64, currency string, methods ...string) string {
	e.t.Helper()
	body := map[string]any{"amount": amount, "currency": currency, "paymentMethods": methods, "idempotencyKey": e.key()}
	if len(methods) > 0 && methods[0] == "MBWAY" {
		body["metadata"] = map[string]any{"phone": "+351912345678"}
	}
	r := e.call("POST", "/payments", e.acct.TestKey, body)
	e.want(r, 201, "")
	return r.str("id")
}

func (e *payEnv) payPix(id string) {
	e.t.Helper()
	e.want(e.call("POST", "/test_helpers/charges/"+id+"/pay", e.acct.TestKey, map[string]any{}), 200, "")
}

func (e *payEnv) balance(cur string) (available, pending int64) {
	e.t.Helper()
	r := e.call("GET", "/wallets/balance?currency="+cur, e.acct.TestKey, nil)
	e.want(r, 200, "")
	return r.num("available"), r.num("pending")
}

func (e *payEnv) verifyLedger() {
	e.t.Helper()
	problems, err := e.srv.App.Payments.VerifyLedger(context.Background())
	if err != nil {
		e.t.Fatalf("verify ledger: %v", err)
	}
	if len(problems) > 0 {
		e.t.Fatalf("ledger drift:\n%s", strings.Join(problems, "\n"))
	}
}

func (e *payEnv) advanceRefunds() {
	e.t.Helper()
	for range 2 {
		if _, err := e.srv.App.Payments.AdvanceRefunds(context.Background()); err != nil {
			e.t.Fatalf("advance refunds: %v", err)
		}
	}
}

// finalised reads a payment until its method data is filled (at most 3 s,
// the contract's bound).
func (e *payEnv) finalised(id, field string) payResp {
	e.t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		g := e.call("GET", "/payments/"+id, e.acct.TestKey, nil)
		e.want(g, 200, "")
		if g.Body[field] != nil {
			return g
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s of %s not filled within 3 s: %s", field, id, g.Raw)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func hasEvent(evs []domain.Event, t domain.EventType) bool {
	for _, e := range evs {
		if e.Type == t {
			return true
		}
	}
	return false
}

func eventTypes(evs []domain.Event) []domain.EventType {
	out := make([]domain.EventType, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

func callerOf(e *payEnv) app.Caller {
	return app.Caller{Account: domain.Account{ID: e.acct.AccountID}, Mode: domain.ModeTest}
}
