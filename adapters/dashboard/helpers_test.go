package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/quitatest"
)

const password = "dashboard-test-password"

// merchant is an account with its dashboard login.
type merchant struct {
	app.NewAccount
	Email string
	Name  string
}

var seq atomic.Int64

func newMerchant(t testing.TB, srv *quitatest.Server, name string) merchant {
	t.Helper()
	email := fmt.Sprintf("dono%d@dashboard.example.com", seq.Add(1))
	a, err := srv.App.Accounts.CreateAccount(context.Background(), app.NewAccountInput{Name: name, Email: email, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	return merchant{NewAccount: a, Email: email, Name: name}
}

// browser is an HTTP client with a cookie jar that does not follow
// redirects (tests look at them).
type browser struct {
	t      testing.TB
	srv    *quitatest.Server
	client *http.Client
	// agent is the User-Agent it sends (Go's own when empty).
	agent string
}

func newBrowser(t testing.TB, srv *quitatest.Server) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, srv: srv, client: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

type answer struct {
	Status   int
	Body     string
	Header   http.Header
	Location string
}

func (b *browser) do(req *http.Request) answer {
	b.t.Helper()
	if b.agent != "" {
		req.Header.Set("User-Agent", b.agent)
	}
	res, err := b.client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return answer{Status: res.StatusCode, Body: string(body), Header: res.Header, Location: res.Header.Get("Location")}
}

func (b *browser) get(path string) answer {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.srv.URL+path, nil)
	return b.do(req)
}

func (b *browser) post(path string, form url.Values) answer {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.srv.URL)
	return b.do(req)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t testing.TB, body string) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no csrf field in the page:\n%.2000s", body)
	}
	return m[1]
}

// login logs in and returns the page the dashboard redirects to.
func (b *browser) login(m merchant) answer {
	b.t.Helper()
	lp := b.get("/dashboard/login")
	if lp.Status != http.StatusOK {
		b.t.Fatalf("login page: %d", lp.Status)
	}
	res := b.post("/dashboard/login", url.Values{"csrf": {csrfOf(b.t, lp.Body)}, "email": {m.Email}, "password": {password},
		"next": {"/dashboard/"}})
	if res.Status != http.StatusSeeOther {
		b.t.Fatalf("login: %d\n%.1500s", res.Status, res.Body)
	}
	return res
}

var idemSeq atomic.Int64

type apiCharge struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Pix    struct {
		TxID string `json:"txid"`
	} `json:"pix"`
}

func apiCall(t testing.TB, srv *quitatest.Server, method, path, key string, body any, want int) apiCharge {
	t.Helper()
	return apiAs[apiCharge](t, srv, method, path, key, body, want)
}

// apiAs calls the API with key (and a fresh idempotency key), wants the
// status and decodes the answer as a T.
func apiAs[T any](t testing.TB, srv *quitatest.Server, method, path, key string, body any, want int) T {
	t.Helper()
	var out T
	r := testkit.Do(t, method, srv.BaseURL+path, body, testkit.Header{"apikey": key,
		"Idempotency-Key": fmt.Sprintf("dashboard-test-%08d", idemSeq.Add(1))}).Want(t, want)
	r.Decode(t, &out)
	return out
}

// paidCharge creates a test charge through the API and pays it.
func paidCharge(t testing.TB, srv *quitatest.Server, key string, amount int64) apiCharge {
	t.Helper()
	c := apiCall(t, srv, http.MethodPost, "/charges", key, map[string]any{"amount": amount, "payment_method": "pix",
		"description": "Pedido de pão de queijo", "customer": map[string]any{"name": "Maria da Silva"}}, http.StatusCreated)
	return apiCall(t, srv, http.MethodPost, "/test_helpers/charges/"+c.ID+"/pay", key, map[string]any{}, http.StatusOK)
}
