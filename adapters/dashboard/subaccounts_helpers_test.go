package dashboard_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"sync"
	"testing"

	"github.com/quitapix/quita/quitatest"
)

// sellerCPF is the first seller's document: no page may show it in clear.
const (
	sellerCPF  = "52998224725"
	sellerCNPJ = "11222333000181"
)

type apiSubaccount struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Document string `json:"document"`
	Status   string `json:"status"`
}

// newSeller creates a sub-account of the key's platform through the API.
func newSeller(t testing.TB, srv *quitatest.Server, key, name, document string) apiSubaccount {
	t.Helper()
	return apiAs[apiSubaccount](t, srv, http.MethodPost, "/subaccounts", key,
		map[string]any{"name": name, "document": document, "email": "vendas@example.com"}, http.StatusCreated)
}

type apiInvitation struct {
	ID     string `json:"id"`
	Email  string `json:"email"`
	Status string `json:"status"`
	URL    string `json:"url"`
}

// invite invites email for the platform's seller through the API.
func invite(t testing.TB, srv *quitatest.Server, key, seller, email string) apiInvitation {
	t.Helper()
	return apiAs[apiInvitation](t, srv, http.MethodPost, "/subaccounts/"+seller+"/invitations", key,
		map[string]any{"email": email}, http.StatusCreated)
}

// splitCharge creates a charge of 10000 by Pix (99 in fees, net 9901)
// split 3000 to fixed and 12.50 % to pct, and pays it when pay is set.
func splitCharge(t testing.TB, srv *quitatest.Server, key, fixed, pct string, pay bool) apiCharge {
	t.Helper()
	c := apiCall(t, srv, http.MethodPost, "/charges", key, map[string]any{"amount": 10000, "payment_method": "pix",
		"splits": []any{map[string]any{"account": fixed, "amount": 3000}, map[string]any{"account": pct, "percent": "12.50"}}},
		http.StatusCreated)
	if !pay {
		return c
	}
	return apiCall(t, srv, http.MethodPost, "/test_helpers/charges/"+c.ID+"/pay", key, map[string]any{}, http.StatusOK)
}

var inviteLinkRE = regexp.MustCompile(`id="invite-link" class="mono" readonly value="([^"]+)"`)

// linkOf is the invitation link an "invited" page shows.
func linkOf(t testing.TB, body string) string {
	t.Helper()
	m := inviteLinkRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no invitation link on the page:\n%.3000s", body)
	}
	return m[1]
}

// logBuffer collects a server's JSON log lines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// lines returns the log lines with their level.
func (l *logBuffer) lines(t testing.TB) []logLine {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []logLine
	sc := bufio.NewScanner(bytes.NewReader(l.buf.Bytes()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var v struct {
			Level string `json:"level"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, logLine{Level: v.Level, Text: sc.Text()})
	}
	return out
}

type logLine struct{ Level, Text string }

// regexpFind is the first group of pattern in body.
func regexpFind(t testing.TB, pattern, body string) string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("%s not on the page:\n%.2000s", pattern, body)
	}
	return m[1]
}
