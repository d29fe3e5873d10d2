package pixsim_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
)

// autoHook is a receiver of Pix Automático callbacks: each body, by the
// path it was posted to, checked against the document's callback schema
// when the document is at hand.
type autoHook struct {
	*httptest.Server
	mu  sync.Mutex
	got []hookCall
}

type hookCall struct {
	path string
	body map[string]any
}

func newAutoHook(t *testing.T, c *autoClient) *autoHook {
	h := &autoHook{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		if c.check != nil {
			hookPath, callback := "/webhookrec", "rec"
			if r.URL.Path == "/hook/cobr" {
				hookPath, callback = "/webhookcobr", "cobr"
			}
			c.check.checkCallback(hookPath, callback, raw)
		}
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		h.mu.Lock()
		h.got = append(h.got, hookCall{path: r.URL.Path, body: body})
		h.mu.Unlock()
	}))
	t.Cleanup(h.Close)
	return h
}

// take returns the callbacks received so far and forgets them.
func (h *autoHook) take() []hookCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.got
	h.got = nil
	return out
}

// first is the object in a callback body's array ("recs" or "cobsr").
func (c hookCall) first() map[string]any {
	for _, k := range []string{"recs", "cobsr"} {
		if list, _ := c.body[k].([]any); len(list) == 1 {
			m, _ := list[0].(map[string]any)
			return m
		}
	}
	return nil
}

// Rule: /webhookrec and /webhookcobr are registered by PUT (an http(s)
// URL, else 400 WebhookRecOperacaoInvalida / WebhookCobROperacaoInvalida),
// read by GET (webhookUrl, criacao) and removed by DELETE (204); without
// one, GET and DELETE are 404.
func TestAutomaticoWebhookRegistry(t *testing.T) {
	t.Parallel()
	sim, c, _ := startAuto(t, pixsim.Config{})
	for path, typ := range map[string]string{"/webhookrec": pixsim.ProblemWebhookRecInvalid, "/webhookcobr": pixsim.ProblemWebhookCobRInvalid} {
		if code, p := c.do("GET", path, ""); code != 404 || p["type"] != pixsim.ProblemNotFound {
			t.Errorf("GET %s before any: %d %v", path, code, p)
		}
		if code, p := c.do("PUT", path, `{"webhookUrl":"ftp://x"}`); code != 400 || p["type"] != typ {
			t.Errorf("PUT %s with a bad URL: %d %v", path, code, p)
		}
		c.must(200, "PUT", path, `{"webhookUrl":"https://merchant.example/hook"}`)
		if got := c.must(200, "GET", path, ""); got["webhookUrl"] != "https://merchant.example/hook" || str(got, "criacao") == "" {
			t.Errorf("GET %s: %v", path, got)
		}
	}
	if sim.WebhookRec() != "https://merchant.example/hook" || sim.WebhookCobR() != "https://merchant.example/hook" {
		t.Errorf("registered: %q %q", sim.WebhookRec(), sim.WebhookCobR())
	}
	c.must(204, "DELETE", "/webhookrec", "")
	if code, _ := c.do("DELETE", "/webhookrec", ""); code != 404 {
		t.Errorf("DELETE twice: %d", code)
	}
	if sim.WebhookRec() != "" {
		t.Errorf("after DELETE: %q", sim.WebhookRec())
	}
}

// Rule: a recurrence's status changes after its creation are posted to
// <webhookrec>/rec as {"recs":[…]}, and every change of a recurring charge
// or of its attempts to <webhookcobr>/cobr as {"cobsr":[…]}, the debit's
// with the Pix; the callback modes of /_sim/callbacks apply.
func TestAutomaticoCallbacks(t *testing.T) {
	t.Parallel()
	sim, c, _ := startAuto(t, pixsim.Config{})
	hook := newAutoHook(t, c)
	c.must(200, "PUT", "/webhookrec", `{"webhookUrl":"`+hook.URL+`/hook"}`)
	c.must(200, "PUT", "/webhookcobr", `{"webhookUrl":"`+hook.URL+`/hook/"}`)
	idRec := str(c.must(201, "POST", "/rec", recBody), "idRec")
	sol := str(c.must(201, "POST", "/solicrec", solicFor(idRec)), "idSolicRec")
	sim.Idle()
	if got := hook.take(); len(got) != 0 {
		t.Errorf("creating a recurrence and its request posted %v", got)
	}
	c.must(200, "POST", "/_sim/solicrec/accept", `{"idSolicRec":"`+sol+`"}`)
	got := hook.take()
	if len(got) != 1 || got[0].path != "/hook/rec" || got[0].first()["status"] != "APROVADA" ||
		str(got[0].first(), "ativacao", "tipoJornada") != "JORNADA_1" || str(got[0].first(), "idRec") != idRec {
		t.Fatalf("approval callbacks: %v", got)
	}
	txid := domain.DeriveTxID("pixsim", "callbacks")
	c.must(201, "PUT", "/cobr/"+txid, cobrFor(idRec, "2026-03-10", "49.90"))
	sim.Idle()
	got = hook.take()
	if len(got) != 1 || got[0].path != "/hook/cobr" || got[0].first()["status"] != "ATIVA" || str(got[0].first(), "txid") != txid {
		t.Fatalf("scheduling callbacks: %v", got)
	}
	pix := c.must(200, "POST", "/_sim/cobr/debit", `{"txid":"`+txid+`"}`)
	got = hook.take()
	if len(got) != 1 || got[0].first()["status"] != "CONCLUIDA" {
		t.Fatalf("debit callbacks: %v", got)
	}
	if p, _ := got[0].first()["pix"].([]any); len(p) != 1 || str(p[0].(map[string]any), "endToEndId") != str(pix, "endToEndId") {
		t.Errorf("the debit callback's pix: %v", got[0].first()["pix"])
	}
	c.must(200, "POST", "/_sim/callbacks", `{"mode":"duplicate"}`)
	c.must(200, "PATCH", "/rec/"+idRec, `{"status":"CANCELADA"}`)
	sim.Idle()
	got = hook.take()
	if len(got) != 2 || got[0].first()["status"] != "CANCELADA" || str(got[1].first(), "encerramento", "cancelamento", "codigo") != "SLCR" {
		t.Errorf("a duplicated cancellation callback: %v", got)
	}
	c.must(200, "POST", "/_sim/callbacks", `{"mode":"drop"}`)
	other := approvedRec(t, c, "NAO_PERMITE")
	if got := hook.take(); len(got) != 0 {
		t.Errorf("dropped callbacks arrived: %v", got)
	}
	cbs := sim.Callbacks()
	last := cbs[len(cbs)-1]
	if !last.Dropped || last.Cause != pixsim.CauseRec || !slices.Equal(last.IDs, []string{other}) {
		t.Errorf("the dropped callback's record: %+v", last)
	}
	c.must(200, "POST", "/_sim/callbacks", `{"mode":"normal"}`)
	c.must(204, "DELETE", "/webhookcobr", "")
	c.must(201, "PUT", "/cobr/"+domain.DeriveTxID("pixsim", "unheard"), cobrFor(other, "2026-03-10", "49.90"))
	sim.Idle()
	if got := hook.take(); len(got) != 0 {
		t.Errorf("callbacks after DELETE /webhookcobr: %v", got)
	}
}

// Rule: a request for confirmation that expires by itself (the clock
// passed dataExpiracaoSolicitacao) expires its recurrence, and the
// webhookrec callback says so without anybody asking for the recurrence.
func TestExpiryCallback(t *testing.T) {
	t.Parallel()
	sim, c, clock := startAuto(t, pixsim.Config{})
	hook := newAutoHook(t, c)
	c.must(200, "PUT", "/webhookrec", `{"webhookUrl":"`+hook.URL+`/hook"}`)
	idRec := str(c.must(201, "POST", "/rec", recBody), "idRec")
	c.must(201, "POST", "/solicrec", solicFor(idRec))
	c.moveClock(clock, time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC))
	c.must(200, "GET", "/locrec?inicio=2026-01-01T00:00:00Z&fim=2026-12-31T00:00:00Z", "")
	sim.Idle()
	if got := hook.take(); len(got) != 1 || got[0].first()["status"] != "EXPIRADA" || str(got[0].first(), "idRec") != idRec {
		t.Errorf("expiry callbacks: %v", got)
	}
}
