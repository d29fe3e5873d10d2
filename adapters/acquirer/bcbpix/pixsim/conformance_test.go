package pixsim_test

// The API Pix rules pixsim keeps (docs/bcbpix.md), each written here in our own words and
// checked over HTTP as a PSP client sees them.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
)

// raw sends a request and returns the status, headers and raw body.
func (c *client) raw(method, path, body string) (int, http.Header, string) {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// Rule: an existing cob that is still ATIVA is revised by PUT (revisao
// grows by one when something changes); only a cob past ATIVA is refused.
func TestPutCobRevisesAnActiveCob(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	id := domain.DeriveTxID("pixsim", "revise")
	if code, cob := c.do("PUT", "/cob/"+id, cobBody); code != 201 || cob["revisao"] != 0.0 {
		t.Fatalf("create: %d %v", code, cob)
	}
	revised := `{"calendario":{"expiracao":600},"valor":{"original":"12.34"},"chave":"k@example.com"}`
	code, cob := c.do("PUT", "/cob/"+id, revised)
	if code != 201 || cob["revisao"] != 1.0 || cob["valor"].(map[string]any)["original"] != "12.34" ||
		cob["calendario"].(map[string]any)["expiracao"] != 600.0 {
		t.Fatalf("revision: %d %v, want 201 revisao 1 valor 12.34 expiracao 600", code, cob)
	}
	if code, cob := c.do("PUT", "/cob/"+id, revised); code != 201 || cob["revisao"] != 1.0 {
		t.Errorf("the same revision again: %d revisao %v, want 201 and revisao still 1", code, cob["revisao"])
	}
	if code, cob := c.do("PATCH", "/cob/"+id, `{"calendario":{"expiracao":900}}`); code != 200 || cob["revisao"] != 2.0 {
		t.Errorf("PATCH revision: %d revisao %v, want 200 and 2", code, cob["revisao"])
	}
	if code, cob := c.do("GET", "/cob/"+id+"?revisao=0", ""); code != 200 || cob["valor"].(map[string]any)["original"] != "10.00" {
		t.Errorf("revision 0: %d %v, want the original 10.00", code, cob)
	}
	if code, p := c.do("GET", "/cob/"+id+"?revisao=7", ""); code != 400 || p["type"] != pixsim.ProblemCobQuery {
		t.Errorf("unknown revision: %d %v", code, p)
	}
	if code, p := c.do("PATCH", "/cob/"+id, `{"status":"REMOVIDA_PELO_USUARIO_RECEBEDOR","valor":{"original":"1.00"}}`); code != 400 ||
		p["type"] != pixsim.ProblemCobInvalid {
		t.Errorf("removal with other changes: %d %v, want 400", code, p)
	}
	if code, _ := c.do("POST", "/_sim/pay", `{"txid":"`+id+`"}`); code != 200 {
		t.Fatalf("pay: %d", code)
	}
	if code, p := c.do("PUT", "/cob/"+id, cobBody); code != 400 || p["type"] != pixsim.ProblemCobInvalid {
		t.Errorf("PUT on a CONCLUIDA cob: %d %v, want 400 CobOperacaoInvalida", code, p)
	}
}

// Rule: the token answer holds a credential, so no cache may store it.
func TestTokenResponseIsNotStored(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	for _, secret := range []string{"secret", "wrong"} {
		req, _ := http.NewRequest(http.MethodPost, c.base+"/oauth/token", strings.NewReader("grant_type=client_credentials"))
		req.SetBasicAuth("id", secret)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("secret %q: %d Cache-Control %q, want no-store", secret, resp.StatusCode, got)
		}
	}
}

// Rule: every cob answer (PUT 201, GET 200, PATCH 200) carries loc with id,
// txid, location, tipoCob and criacao.
func TestEveryCobAnswerHasAFullLoc(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	id := domain.DeriveTxID("pixsim", "loc")
	steps := []struct{ method, body string }{
		{"PUT", cobBody}, {"GET", ""}, {"PATCH", `{"solicitacaoPagador":"pedido"}`}, {"PATCH", `{"status":"REMOVIDA_PELO_USUARIO_RECEBEDOR"}`},
	}
	for _, s := range steps {
		code, cob := c.do(s.method, "/cob/"+id, s.body)
		loc, _ := cob["loc"].(map[string]any)
		if code >= 300 || loc == nil {
			t.Fatalf("%s: %d %v", s.method, code, cob)
		}
		crt, _ := loc["criacao"].(string)
		if _, err := time.Parse(time.RFC3339, crt); err != nil || loc["txid"] != id || loc["tipoCob"] != "cob" ||
			loc["location"] != cob["location"] || loc["id"] == nil {
			t.Errorf("%s: loc %v, want id, txid %s, location, tipoCob cob and an RFC 3339 criacao", s.method, loc, id)
		}
	}
}

// Rule: a GET /pix that matches nothing is one page, with an empty array.
func TestEmptyPixPage(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	code, _, body := c.raw("GET", "/pix?inicio=2020-01-01T00:00:00Z&fim=2020-01-02T00:00:00Z", "")
	var page struct {
		Parametros struct {
			Paginacao map[string]int `json:"paginacao"`
		} `json:"parametros"`
		Pix json.RawMessage `json:"pix"`
	}
	if err := json.Unmarshal([]byte(body), &page); err != nil || code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	if n := page.Parametros.Paginacao["quantidadeDePaginas"]; n < 1 {
		t.Errorf("quantidadeDePaginas %d, want at least 1", n)
	}
	if string(page.Pix) != "[]" {
		t.Errorf(`"pix": %s, want []`, page.Pix)
	}
	if code, p := c.do("GET", "/pix?inicio=2020-01-02T00:00:00Z&fim=2020-01-01T00:00:00Z", ""); code != 400 || p["type"] != pixsim.ProblemPixQuery {
		t.Errorf("fim before inicio: %d %v, want 400 PixConsultaInvalida", code, p)
	}
}

// Rule: GET /pix pages follow paginacao, and a PSP may cap the page size.
func TestPixPagesAreCapped(t *testing.T) {
	t.Parallel()
	_, c := startWith(t, pixsim.Config{MaxPageSize: 2})
	for i := range 5 {
		id := domain.DeriveTxID("pixsim", "page", string(rune('a'+i)))
		c.do("PUT", "/cob/"+id, cobBody)
		c.do("POST", "/_sim/pay", `{"txid":"`+id+`"}`)
	}
	q := "/pix?inicio=2020-01-01T00:00:00Z&fim=2099-01-01T00:00:00Z&paginacao.itensPorPagina=100&paginacao.paginaAtual="
	seen := 0
	for page := range 3 {
		code, body := c.do("GET", q+string(rune('0'+page)), "")
		pg := body["parametros"].(map[string]any)["paginacao"].(map[string]any)
		if code != 200 || pg["itensPorPagina"] != 2.0 || pg["quantidadeDePaginas"] != 3.0 || pg["quantidadeTotalDeItens"] != 5.0 {
			t.Fatalf("page %d: %d %v", page, code, pg)
		}
		seen += len(body["pix"].([]any))
	}
	if seen != 5 {
		t.Errorf("%d pix over three pages, want 5", seen)
	}
}

// Rule: the problem types of devoluções are PixDevolucaoNaoEncontrada
// (unknown id) and PixDevolucaoInvalida (above what is left of the Pix).
func TestDevolucaoProblemTypes(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	id := domain.DeriveTxID("pixsim", "problems")
	c.do("PUT", "/cob/"+id, cobBody)
	_, p := c.do("POST", "/_sim/pay", `{"txid":"`+id+`"}`)
	e2e, _ := p["endToEndId"].(string)
	if code, p := c.do("GET", "/pix/"+e2e+"/devolucao/nope", ""); code != 404 ||
		p["type"] != "https://pix.bcb.gov.br/api/v2/error/PixDevolucaoNaoEncontrada" {
		t.Errorf("unknown devolução: %d %v", code, p["type"])
	}
	if code, p := c.do("PUT", "/pix/"+e2e+"/devolucao/d1", `{"valor":"10.01"}`); code != 400 ||
		p["type"] != "https://pix.bcb.gov.br/api/v2/error/PixDevolucaoInvalida" {
		t.Errorf("over-refund: %d %v", code, p["type"])
	}
}

// hookRecorder is a webhook receiver that hands each callback body over.
func hookRecorder(t *testing.T) (*httptest.Server, chan map[string]any) {
	t.Helper()
	got := make(chan map[string]any, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		got <- body
	}))
	t.Cleanup(hook.Close)
	return hook, got
}

// devolucaoStatus returns the status of the devolução id in a callback body.
func devolucaoStatus(body map[string]any, id string) string {
	pix, _ := body["pix"].([]any)
	for _, p := range pix {
		devs, _ := p.(map[string]any)["devolucoes"].([]any)
		for _, d := range devs {
			if dm := d.(map[string]any); dm["id"] == id {
				s, _ := dm["status"].(string)
				return s
			}
		}
	}
	return ""
}

// Rule: the webhook is called when a devolução reaches DEVOLVIDO or
// NAO_REALIZADO; the PSP does it by itself, nobody reads the devolução.
func TestDevolucaoEndCallsTheWebhook(t *testing.T) {
	t.Parallel()
	_, c := startWith(t, pixsim.Config{ReturnDelay: 20 * time.Millisecond})
	hook, got := hookRecorder(t)
	if code, _ := c.do("PUT", "/webhook/k@example.com", `{"webhookUrl":"`+hook.URL+`"}`); code != 200 {
		t.Fatal("webhook")
	}
	id := domain.DeriveTxID("pixsim", "devcb")
	c.do("PUT", "/cob/"+id, cobBody)
	_, p := c.do("POST", "/_sim/pay", `{"txid":"`+id+`"}`)
	e2e, _ := p["endToEndId"].(string)
	<-got // the payment's callback
	wait := func(devID, want string) {
		t.Helper()
		select {
		case body := <-got:
			if s := devolucaoStatus(body, devID); s != want {
				t.Errorf("callback for devolução %s: status %q, want %q (%v)", devID, s, want, body)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no callback after devolução %s", devID)
		}
	}
	if code, _ := c.do("PUT", "/pix/"+e2e+"/devolucao/ok1", `{"valor":"3.00"}`); code != 201 {
		t.Fatal("devolução")
	}
	wait("ok1", pixsim.ReturnDone)
	c.do("POST", "/_sim/returns", `{"fail_next":true}`)
	if code, _ := c.do("PUT", "/pix/"+e2e+"/devolucao/ko1", `{"valor":"2.00"}`); code != 201 {
		t.Fatal("devolução")
	}
	wait("ko1", pixsim.ReturnFailed)
	select {
	case body := <-got:
		t.Errorf("an extra callback: %v", body)
	case <-time.After(100 * time.Millisecond):
	}
}

// Unknown webhooks answer WebhookNaoEncontrado.
func TestUnknownWebhook(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	for _, m := range []string{"GET", "DELETE"} {
		if code, p := c.do(m, "/webhook/"+url.PathEscape("nobody@example.com"), ""); code != 404 || p["type"] != pixsim.ProblemWebhookMissing {
			t.Errorf("%s: %d %v", m, code, p)
		}
	}
}

// Rule (simulator control): POST /_sim/returns {"fail_next":true,"count":n}
// makes the next n devoluções end NAO_REALIZADO, each under its own id;
// {"fail_next":false} lets the next one succeed. A refused devolução asked
// again under its id is answered as it stands, never made again.
func TestSimRefusesNDevolucoes(t *testing.T) {
	t.Parallel()
	_, c := start(t)
	id := domain.DeriveTxID("pixsim", "refuse")
	c.do("PUT", "/cob/"+id, cobBody)
	_, p := c.do("POST", "/_sim/pay", `{"txid":"`+id+`"}`)
	e2e, _ := p["endToEndId"].(string)
	if code, body := c.do("POST", "/_sim/returns", `{"fail_next":true,"count":2}`); code != 200 || body["count"] != 2.0 {
		t.Fatalf("control: %d %v", code, body)
	}
	status := func(dev string) string {
		t.Helper()
		code, d := c.do("GET", "/pix/"+e2e+"/devolucao/"+dev, "")
		if code != 200 {
			t.Fatalf("GET devolução %s: %d", dev, code)
		}
		s, _ := d["status"].(string)
		return s
	}
	for _, dev := range []string{"r1", "r2", "r3"} {
		if code, d := c.do("PUT", "/pix/"+e2e+"/devolucao/"+dev, `{"valor":"1.00"}`); code != 201 || d["status"] != pixsim.ReturnProcessing {
			t.Fatalf("PUT %s: %d %v", dev, code, d)
		}
	}
	if s1, s2, s3 := status("r1"), status("r2"), status("r3"); s1 != pixsim.ReturnFailed || s2 != pixsim.ReturnFailed || s3 != pixsim.ReturnDone {
		t.Errorf("statuses %s %s %s, want two NAO_REALIZADO then DEVOLVIDO", s1, s2, s3)
	}
	if code, d := c.do("PUT", "/pix/"+e2e+"/devolucao/r1", `{"valor":"1.00"}`); code != 201 || d["status"] != pixsim.ReturnFailed {
		t.Errorf("PUT r1 again: %d %v, want the refused devolução", code, d)
	}
	c.do("POST", "/_sim/returns", `{"fail_next":true,"count":5}`)
	c.do("POST", "/_sim/returns", `{"fail_next":false}`)
	c.do("PUT", "/pix/"+e2e+"/devolucao/r4", `{"valor":"1.00"}`)
	if s := status("r4"); s != pixsim.ReturnDone {
		t.Errorf("after fail_next false: %s, want DEVOLVIDO", s)
	}
	if code, _ := c.do("POST", "/_sim/returns", `{"fail_next":true,"count":-1}`); code != 400 {
		t.Errorf("a negative count answered %d, want 400", code)
	}
}
