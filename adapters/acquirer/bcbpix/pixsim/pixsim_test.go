package pixsim_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
)

type client struct {
	t     *testing.T
	base  string
	token string
}

func (c *client) do(method, path, body string) (int, map[string]any) {
	c.t.Helper()
	code, _, raw := c.raw(method, path, body)
	var out map[string]any
	_ = json.Unmarshal([]byte(raw), &out)
	return code, out
}

func start(t *testing.T) (*pixsim.Server, *client) {
	t.Helper()
	return startWith(t, pixsim.Config{})
}

// startWith runs a simulator with cfg (client id and secret set) and
// returns a client holding an access token.
func startWith(t *testing.T, cfg pixsim.Config) (*pixsim.Server, *client) {
	t.Helper()
	cfg.ClientID, cfg.ClientSecret = "id", "secret"
	sim := pixsim.New(cfg)
	hs := httptest.NewServer(sim)
	t.Cleanup(func() { hs.Close(); sim.Close() })
	c := &client{t: t, base: hs.URL}
	form := url.Values{"grant_type": {"client_credentials"}}
	req, _ := http.NewRequest(http.MethodPost, hs.URL+"/oauth/token", strings.NewReader(form.Encode()))
	req.SetBasicAuth("id", "secret")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		TokenType   string `json:"token_type"`
		ExpiresIn   int    `json:"expires_in"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || tok.AccessToken == "" || tok.TokenType != "Bearer" || tok.ExpiresIn != 3600 {
		t.Fatalf("token: %d %+v", resp.StatusCode, tok)
	}
	c.token = tok.AccessToken
	return sim, c
}

var tx = domain.DeriveTxID("pixsim", "1")

const cobBody = `{"calendario":{"expiracao":3600},"valor":{"original":"10.00"},"chave":"k@example.com"}`

func TestTokenAndAuth(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	tests := []struct {
		name     string
		user     string
		pass     string
		grant    string
		wantCode int
	}{
		{"wrong secret", "id", "nope", "client_credentials", http.StatusUnauthorized},
		{"wrong grant", "id", "secret", "password", http.StatusBadRequest},
		{"good", "id", "secret", "client_credentials", http.StatusOK},
	}
	for _, tc := range tests {
		form := url.Values{"grant_type": {tc.grant}}
		req, _ := http.NewRequest(http.MethodPost, c.base+"/oauth/token", strings.NewReader(form.Encode()))
		req.SetBasicAuth(tc.user, tc.pass)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.wantCode {
			t.Errorf("%s: %d, want %d", tc.name, resp.StatusCode, tc.wantCode)
		}
	}
	anon := &client{t: t, base: c.base}
	code, p := anon.do(http.MethodGet, "/cob/"+tx, "")
	if code != http.StatusUnauthorized || p["type"] != pixsim.ProblemUnauthorized {
		t.Errorf("no token: %d %v", code, p)
	}
}

func TestCobLifecycle(t *testing.T) {
	t.Parallel()
	sim, c := start(t)
	tests := []struct {
		name, method, path, body string
		wantCode                 int
		wantType                 string
	}{
		{"bad txid", "PUT", "/cob/short", cobBody, 400, pixsim.ProblemCobInvalid},
		{"no valor", "PUT", "/cob/" + tx, `{"chave":"k"}`, 400, pixsim.ProblemCobInvalid},
		{"devedor without nome", "PUT", "/cob/" + tx, `{"valor":{"original":"1.00"},"chave":"k","devedor":{"cpf":"52998224725"}}`, 400, pixsim.ProblemCobInvalid},
		{"create", "PUT", "/cob/" + tx, cobBody, 201, ""},
		{"same txid again revises", "PUT", "/cob/" + tx, cobBody, 201, ""},
		{"read", "GET", "/cob/" + tx, "", 200, ""},
		{"unknown", "GET", "/cob/" + domain.DeriveTxID("none"), "", 404, pixsim.ProblemCobNotFound},
		{"bad status", "PATCH", "/cob/" + tx, `{"status":"CONCLUIDA"}`, 400, pixsim.ProblemCobInvalid},
	}
	for _, tc := range tests {
		code, p := c.do(tc.method, tc.path, tc.body)
		if code != tc.wantCode || (tc.wantType != "" && p["type"] != tc.wantType) {
			t.Errorf("%s: %d %v, want %d %s", tc.name, code, p, tc.wantCode, tc.wantType)
		}
	}
	_, cob := c.do("GET", "/cob/"+tx, "")
	if cob["status"] != pixsim.CobActive || cob["pixCopiaECola"] == "" || cob["location"] == "" {
		t.Errorf("cob %v", cob)
	}
	// Pay through the control API; a concluded cob cannot be removed.
	code, p := c.do("POST", "/_sim/pay", `{"txid":"`+tx+`","payer_document":"52998224725","disclose":true}`)
	if code != 200 || p["valor"] != "10.00" || p["pagador"] == nil {
		t.Fatalf("pay: %d %v", code, p)
	}
	e2e, _ := p["endToEndId"].(string)
	if !domain.ValidEndToEndID(e2e) {
		t.Errorf("end-to-end id %q", e2e)
	}
	if code, _ := c.do("PATCH", "/cob/"+tx, `{"status":"REMOVIDA_PELO_USUARIO_RECEBEDOR"}`); code != 400 {
		t.Errorf("removing a paid cob: %d", code)
	}
	if code, _ := c.do("POST", "/_sim/pay", `{"txid":"`+tx+`"}`); code != 400 {
		t.Errorf("paying twice: %d", code)
	}
	// GET /pix/{e2eid}, devoluções up to the amount.
	if code, p := c.do("GET", "/pix/"+e2e, ""); code != 200 || p["txid"] != tx {
		t.Errorf("get pix: %d %v", code, p)
	}
	devs := []struct {
		id, valor string
		want      int
	}{{"d1", "6.00", 201}, {"d1", "6.00", 201}, {"d2", "5.00", 400}, {"d2", "4.00", 201}, {"bad id!", "1.00", 400}}
	for _, d := range devs {
		code, p := c.do("PUT", "/pix/"+e2e+"/devolucao/"+url.PathEscape(d.id), `{"valor":"`+d.valor+`","natureza":"ORIGINAL"}`)
		if code != d.want {
			t.Errorf("devolução %s %s: %d %v, want %d", d.id, d.valor, code, p, d.want)
		}
	}
	if code, p := c.do("GET", "/pix/"+e2e+"/devolucao/d1", ""); code != 200 || p["status"] != pixsim.ReturnDone {
		t.Errorf("devolução read: %d %v", code, p)
	}
	if n := len(sim.Returns(e2e)); n != 2 {
		t.Errorf("%d devoluções, want 2", n)
	}
}

func TestCallbacksAndControl(t *testing.T) {
	t.Parallel()
	sim, c := start(t)
	var mu sync.Mutex
	var got []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Pix []struct {
				EndToEndID string `json:"endToEndId"`
			} `json:"pix"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		defer mu.Unlock()
		for _, p := range body.Pix {
			got = append(got, r.URL.Path+" "+p.EndToEndID)
		}
	}))
	t.Cleanup(hook.Close)
	if code, _ := c.do("PUT", "/webhook/k@example.com", `{"webhookUrl":"`+hook.URL+`/cb"}`); code != 200 {
		t.Fatalf("webhook: %d", code)
	}
	if code, p := c.do("GET", "/webhook/k@example.com", ""); code != 200 || p["webhookUrl"] != hook.URL+"/cb" {
		t.Fatalf("webhook read: %d %v", code, p)
	}
	modes := []struct {
		mode string
		want int
	}{{pixsim.CallbacksNormal, 1}, {pixsim.CallbacksDrop, 0}, {pixsim.CallbacksDuplicate, 2}}
	for i, m := range modes {
		if code, _ := c.do("POST", "/_sim/callbacks", `{"mode":"`+m.mode+`"}`); code != 200 {
			t.Fatalf("mode %s: %d", m.mode, code)
		}
		id := domain.DeriveTxID("cb", m.mode)
		if code, _ := c.do("PUT", "/cob/"+id, cobBody); code != 201 {
			t.Fatal("create")
		}
		mu.Lock()
		got = nil
		mu.Unlock()
		_, p := c.do("POST", "/_sim/pay", `{"txid":"`+id+`","amount":500}`)
		if p["valor"] != "5.00" {
			t.Errorf("paid %v, want 5.00", p["valor"])
		}
		mu.Lock()
		n := len(got)
		for _, g := range got {
			if !strings.HasPrefix(g, "/cb/pix E") {
				t.Errorf("callback %q, want POST <url>/pix", g)
			}
		}
		mu.Unlock()
		if n != m.want {
			t.Errorf("case %d mode %s: %d callbacks, want %d", i, m.mode, n, m.want)
		}
	}
	if len(sim.Callbacks()) != 4 {
		t.Errorf("callback record %+v", sim.Callbacks())
	}
	// Down: every API Pix call answers 503 with a problem.
	c.do("POST", "/_sim/down", `{"down":true}`)
	if code, p := c.do("GET", "/cob/"+tx, ""); code != 503 || p["type"] != pixsim.ProblemUnavailable {
		t.Errorf("down: %d %v", code, p)
	}
	c.do("POST", "/_sim/down", `{"down":false}`)
	if code, _ := c.do("GET", "/pix?inicio=2020-01-01T00:00:00Z&fim=2099-01-01T00:00:00Z", ""); code != 200 {
		t.Errorf("up again: %d", code)
	}
}
