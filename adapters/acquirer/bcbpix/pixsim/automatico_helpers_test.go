package pixsim_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
)

// autoClient talks to a simulator through a transport that, when the API
// Pix document is at hand, checks every exchange against it
// (apipix_spec_test.go); the test fails on any mismatch.
type autoClient struct {
	t     *testing.T
	base  string
	token string
	hc    *http.Client
	check *specCheck // nil without the document
}

func (c *autoClient) raw(method, path, body string) (int, http.Header, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func (c *autoClient) do(method, path, body string) (int, map[string]any) {
	c.t.Helper()
	code, _, raw := c.raw(method, path, body)
	var out map[string]any
	_ = json.Unmarshal([]byte(raw), &out)
	return code, out
}

// must sends a request and fails the test unless it is answered want.
func (c *autoClient) must(want int, method, path, body string) map[string]any {
	c.t.Helper()
	code, out := c.do(method, path, body)
	if code != want {
		c.t.Fatalf("%s %s: %d %v, want %d", method, path, code, out, want)
	}
	return out
}

// moveClock sets the simulator's clock and takes a new token, as a
// client whose token expired would.
func (c *autoClient) moveClock(clock *simClock, to time.Time) {
	c.t.Helper()
	clock.set(to)
	form := url.Values{"grant_type": {"client_credentials"}}
	req, _ := http.NewRequest(http.MethodPost, c.base+"/oauth/token", strings.NewReader(form.Encode()))
	req.SetBasicAuth("id", "secret")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		c.t.Fatalf("token: %d %v", resp.StatusCode, err)
	}
	c.token = tok.AccessToken
}

// startAuto runs a simulator on a clock at Monday 2 March 2026, noon in
// Brasília, and returns a checked client.
func startAuto(t *testing.T, cfg pixsim.Config) (*pixsim.Server, *autoClient, *simClock) {
	t.Helper()
	clock := &simClock{now: time.Date(2026, 3, 2, 15, 0, 0, 0, time.UTC)}
	if cfg.Now == nil {
		cfg.Now = clock.Now
	}
	sim, plain := startWith(t, cfg)
	c := &autoClient{t: t, base: plain.base, token: plain.token, hc: http.DefaultClient}
	if loadAPIPix().err == nil {
		c.check = newSpecCheck(t)
		c.hc = &http.Client{Transport: c.check}
		t.Cleanup(c.check.report)
	}
	return sim, c, clock
}

// A recurrence of R$ 49.90 a month from 10 March 2026, retries allowed.
const recBody = `{"vinculo":{"contrato":"CT-0001","objeto":"Plano mensal","devedor":{"cpf":"12345678909","nome":"Fulano de Tal"}},
"calendario":{"dataInicial":"2026-03-10","periodicidade":"MENSAL"},"valor":{"valorRec":"49.90"},
"politicaRetentativa":"PERMITE_3R_7D"}`

// recWith is recBody with its politicaRetentativa and extra members
// (loc, ativacao…) added.
func recWith(policy, extra string) string {
	b := strings.Replace(recBody, `"PERMITE_3R_7D"`, `"`+policy+`"`, 1)
	if extra != "" {
		b = strings.TrimSuffix(b, "}") + "," + extra + "}"
	}
	return b
}

// cobrFor is a recurring charge of amount for idRec due on day.
func cobrFor(idRec, day, amount string) string {
	return `{"idRec":"` + idRec + `","calendario":{"dataDeVencimento":"` + day + `"},"valor":{"original":"` + amount + `"},
"ajusteDiaUtil":true,"recebedor":{"agencia":"0001","conta":"123456","tipoConta":"CORRENTE"},
"devedor":{"email":"fulano@example.com","cidade":"Sao Paulo","uf":"SP"}}`
}

// str reads a string at a path of nested objects.
func str(m map[string]any, path ...string) string {
	var cur any = m
	for _, p := range path {
		obj, _ := cur.(map[string]any)
		cur = obj[p]
	}
	s, _ := cur.(string)
	return s
}

// statuses lists the status of each entry of a history array.
func statuses(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, e := range list {
		s, _ := e.(map[string]any)["status"].(string)
		out = append(out, s)
	}
	return out
}

// approvedRec creates a recurrence (policy, fixed amount 49.90) and has
// the payer approve it through its QR code (journey 2); it returns the
// idRec.
func approvedRec(t *testing.T, c *autoClient, policy string) string {
	t.Helper()
	loc := c.must(201, "POST", "/locrec", "")
	rec := c.must(201, "POST", "/rec", recWith(policy, `"loc":`+jsonNum(loc["id"])))
	id := str(rec, "idRec")
	c.must(200, "POST", "/_sim/rec/approve", `{"idRec":"`+id+`"}`)
	return id
}

func jsonNum(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
