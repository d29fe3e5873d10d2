package pixsim_test

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
)

// Rule: every Pix Automático operation, with each success and problem
// status it documents, answers as the API Pix document says (0
// violations for requests, answers and callbacks), and the tour reaches
// each of them.
func TestAutomaticoConformance(t *testing.T) {
	t.Parallel()
	requireAPIPix(t)
	sim, c, clock := startAuto(t, pixsim.Config{})
	hook := newAutoHook(t, c)
	const window = "?inicio=2026-01-01T00:00:00Z&fim=2026-12-31T00:00:00Z"
	for _, h := range []string{"/webhookrec", "/webhookcobr"} {
		c.must(404, "GET", h, "")
		c.must(404, "DELETE", h, "")
		c.must(400, "PUT", h, `{"webhookUrl":"nope"}`)
		c.must(200, "PUT", h, `{"webhookUrl":"`+hook.URL+`/hook"}`)
		c.must(200, "GET", h, "")
	}
	// Locations and recurrences.
	loc := c.must(201, "POST", "/locrec", "")
	locID := jsonNum(loc["id"])
	c.must(200, "GET", "/locrec/"+locID, "")
	c.must(404, "GET", "/locrec/0", "")
	c.must(200, "GET", "/locrec"+window+"&idRecPresente=false&paginacao.itensPorPagina=10", "")
	c.must(400, "GET", "/locrec?inicio=2026-02-01T00:00:00Z&fim=2026-01-01T00:00:00Z", "")
	c.must(400, "POST", "/rec", `{"vinculo":{}}`)
	c.must(400, "POST", "/rec", strings.Replace(recBody, "2026-03-10", "2026-03-01", 1))
	cob := domain.DeriveTxID("pixsim", "tour-cob")
	c.must(201, "PUT", "/cob/"+cob, cobBody)
	j3 := str(c.must(201, "POST", "/rec", recWith("NAO_PERMITE", `"loc":`+locID+`,"ativacao":{"dadosJornada":{"txid":"`+cob+`"}}`)), "idRec")
	c.must(200, "GET", "/rec/"+j3, "")
	c.must(200, "GET", "/rec/"+j3+"?txid="+cob, "")
	c.must(400, "GET", "/rec/"+j3+"?txid="+domain.DeriveTxID("none"), "")
	c.must(404, "GET", "/rec/RN9999999820260302abcdefghijk", "")
	payload := strings.TrimPrefix(str(loc, "location"), "pixsim.local")
	c.must(200, "GET", payload, "")
	c.must(200, "POST", "/_sim/rec/approve", `{"idRec":"`+j3+`","codMun":"3550308"}`)
	c.must(200, "GET", "/rec"+window+"&cpf=12345678909&locationPresente=true&status=APROVADA", "")
	c.must(400, "GET", "/rec"+window+"&cpf=12345678909&cnpj=11222333000181", "")
	c.must(200, "PATCH", "/rec/"+j3, `{"vinculo":{"devedor":{"nome":"Fulano T."}}}`)
	c.must(400, "PATCH", "/rec/"+j3, `{"loc":`+locID+`}`)
	c.must(404, "PATCH", "/rec/RN9999999820260302abcdefghijk", `{"status":"CANCELADA"}`)
	// Journey 1.
	j1 := str(c.must(201, "POST", "/rec", recBody), "idRec")
	c.must(400, "POST", "/solicrec", `{"idRec":"`+j1+`"}`)
	c.must(404, "POST", "/solicrec", solicFor("RN9999999820260302abcdefghijk"))
	sol := str(c.must(201, "POST", "/solicrec", solicFor(j1)), "idSolicRec")
	c.must(200, "GET", "/solicrec/"+sol, "")
	c.must(404, "GET", "/solicrec/SC999999982026030200000000000", "")
	c.must(404, "PATCH", "/solicrec/SC999999982026030200000000000", `{"status":"CANCELADA"}`)
	c.must(201, "PATCH", "/solicrec/"+sol, `{"status":"CANCELADA"}`)
	c.must(400, "PATCH", "/solicrec/"+sol, `{"status":"CANCELADA"}`)
	sol = str(c.must(201, "POST", "/solicrec", solicFor(j1)), "idSolicRec")
	c.must(200, "POST", "/_sim/solicrec/accept", `{"idSolicRec":"`+sol+`"}`)
	c.must(200, "GET", "/rec/"+j1, "")
	// Recurring charges.
	txid := domain.DeriveTxID("pixsim", "tour-cobr")
	c.must(400, "PUT", "/cobr/"+txid, cobrFor(j1, "2026-03-01", "49.90"))
	c.must(201, "PUT", "/cobr/"+txid, cobrFor(j1, "2026-03-10", "49.90"))
	c.must(400, "POST", "/cobr", cobrFor(j1, "2026-03-11", "49.90"))
	posted := str(c.must(201, "POST", "/cobr", cobrFor(j3, "2026-03-11", "49.90")), "txid")
	c.must(200, "GET", "/cobr/"+txid, "")
	c.must(404, "GET", "/cobr/"+domain.DeriveTxID("none"), "")
	c.must(200, "GET", "/cobr"+window+"&idRec="+j1+"&status=ATIVA", "")
	c.must(400, "GET", "/cobr?inicio=x&fim=2026-12-31T00:00:00Z", "")
	c.must(400, "POST", "/cobr/"+txid+"/retentativa/2026-03-12", "")
	c.must(404, "POST", "/cobr/"+domain.DeriveTxID("none")+"/retentativa/2026-03-12", "")
	c.must(200, "POST", "/_sim/cobr/fail", `{"txid":"`+txid+`","intraday":true}`)
	c.must(200, "POST", "/_sim/cobr/fail", `{"txid":"`+txid+`","codigo":"AM02"}`)
	c.must(201, "POST", "/cobr/"+txid+"/retentativa/2026-03-12", "")
	c.must(200, "POST", "/_sim/cobr/debit", `{"txid":"`+txid+`"}`)
	c.must(200, "GET", "/cobr/"+txid, "")
	c.must(400, "PATCH", "/cobr/"+txid, `{"status":"CANCELADA"}`)
	c.must(404, "PATCH", "/cobr/"+domain.DeriveTxID("none"), `{"status":"CANCELADA"}`)
	c.must(200, "PATCH", "/cobr/"+posted, `{"status":"CANCELADA"}`)
	fatal := domain.DeriveTxID("pixsim", "tour-fatal")
	c.must(201, "PUT", "/cobr/"+fatal, cobrFor(j3, "2026-03-12", "49.90"))
	c.must(200, "POST", "/_sim/cobr/fail", `{"txid":"`+fatal+`","codigo":"AC05"}`)
	c.must(200, "GET", "/cobr/"+fatal, "")
	// Ends: the payer revokes, the receiver cancels, a request expires.
	c.must(200, "POST", "/_sim/rec/cancel", `{"idRec":"`+j3+`"}`)
	c.must(200, "GET", "/rec/"+j3, "")
	c.must(400, "GET", payload, "")
	c.must(200, "DELETE", "/locrec/"+locID+"/idRec", "")
	c.must(404, "GET", payload, "")
	c.must(404, "DELETE", "/locrec/0/idRec", "")
	c.must(400, "PATCH", "/rec/"+j3, `{"status":"CANCELADA"}`)
	c.must(200, "PATCH", "/rec/"+j1, `{"status":"CANCELADA"}`)
	late := str(c.must(201, "POST", "/rec", recBody), "idRec")
	c.must(201, "POST", "/solicrec", solicFor(late))
	c.moveClock(clock, time.Date(2026, 3, 6, 0, 0, 0, 0, time.UTC))
	c.must(200, "GET", "/rec"+window, "")
	sim.SetDown(true)
	c.must(503, "GET", "/rec/"+late, "")
	c.must(503, "GET", payload, "")
	sim.SetDown(false)
	c.must(204, "DELETE", "/webhookrec", "")
	c.must(204, "DELETE", "/webhookcobr", "")
	sim.Idle()
	calls := map[string]bool{}
	for _, call := range hook.take() {
		calls[call.path] = true
	}
	if !calls["/hook/rec"] || !calls["/hook/cobr"] {
		t.Errorf("callbacks seen: %v", calls)
	}
	var missing []string
	for _, want := range []string{
		"POST /locrec 201", "GET /locrec 200", "GET /locrec 400", "GET /locrec/{id} 200", "GET /locrec/{id} 404",
		"DELETE /locrec/{id}/idRec 200", "DELETE /locrec/{id}/idRec 404",
		"POST /rec 201", "POST /rec 400", "GET /rec 200", "GET /rec 400",
		"GET /rec/{idRec} 200", "GET /rec/{idRec} 400", "GET /rec/{idRec} 404", "GET /rec/{idRec} 503",
		"PATCH /rec/{idRec} 200", "PATCH /rec/{idRec} 400", "PATCH /rec/{idRec} 404",
		"GET /rec/{recUrlAccessToken} 200", "GET /rec/{recUrlAccessToken} 400", "GET /rec/{recUrlAccessToken} 404",
		"GET /rec/{recUrlAccessToken} 503",
		"POST /solicrec 201", "POST /solicrec 400", "POST /solicrec 404",
		"GET /solicrec/{idSolicRec} 200", "GET /solicrec/{idSolicRec} 404",
		"PATCH /solicrec/{idSolicRec} 201", "PATCH /solicrec/{idSolicRec} 400", "PATCH /solicrec/{idSolicRec} 404",
		"PUT /cobr/{txid} 201", "PUT /cobr/{txid} 400", "POST /cobr 201", "POST /cobr 400",
		"GET /cobr/{txid} 200", "GET /cobr/{txid} 404", "GET /cobr 200", "GET /cobr 400",
		"PATCH /cobr/{txid} 200", "PATCH /cobr/{txid} 400", "PATCH /cobr/{txid} 404",
		"POST /cobr/{txid}/retentativa/{data} 201", "POST /cobr/{txid}/retentativa/{data} 400",
		"POST /cobr/{txid}/retentativa/{data} 404",
		"PUT /webhookrec 200", "PUT /webhookrec 400", "GET /webhookrec 200", "GET /webhookrec 404",
		"DELETE /webhookrec 204", "DELETE /webhookrec 404",
		"PUT /webhookcobr 200", "PUT /webhookcobr 400", "GET /webhookcobr 200", "GET /webhookcobr 404",
		"DELETE /webhookcobr 204", "DELETE /webhookcobr 404",
	} {
		c.check.mu.Lock()
		n := c.check.seen[want]
		c.check.mu.Unlock()
		if n == 0 {
			missing = append(missing, want)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("the tour did not reach: %v", missing)
	}
}

// Rule: GET /rec, /cobr and /locrec page their results (paginacao, capped
// at Config.MaxPageSize), filter by creation time and their filters, and
// refuse a query that breaks a rule with 400 XxxConsultaInvalida.
func TestAutomaticoLists(t *testing.T) {
	t.Parallel()
	_, c, _ := startAuto(t, pixsim.Config{MaxPageSize: 2})
	for range 3 {
		approvedRec(t, c, "NAO_PERMITE")
	}
	c.must(201, "POST", "/rec", recWith("NAO_PERMITE", `"recebedor":{"convenio":"Master"}`))
	c.must(201, "POST", "/rec", strings.Replace(recBody, "12345678909", "52998224725", 1))
	q := "?inicio=2026-03-01T00:00:00Z&fim=2026-03-03T00:00:00Z&paginacao.itensPorPagina=50"
	seen := 0
	for page := range 3 {
		got := c.must(200, "GET", "/rec"+q+"&paginacao.paginaAtual="+string(rune('0'+page)), "")
		pg := got["parametros"].(map[string]any)["paginacao"].(map[string]any)
		if pg["itensPorPagina"] != 2.0 || pg["quantidadeDePaginas"] != 3.0 || pg["quantidadeTotalDeItens"] != 5.0 {
			t.Fatalf("page %d: %v", page, pg)
		}
		seen += len(got["recs"].([]any))
	}
	if seen != 5 {
		t.Errorf("%d recurrences over three pages, want 5", seen)
	}
	for query, want := range map[string]float64{"&cpf=52998224725": 1, "&status=APROVADA": 3, "&locationPresente=false": 2, "&convenio=Master": 1} {
		got := c.must(200, "GET", "/rec"+q+query, "")
		if n := got["parametros"].(map[string]any)["paginacao"].(map[string]any)["quantidadeTotalDeItens"]; n != want {
			t.Errorf("%s: %v, want %v", query, n, want)
		}
	}
	if got := c.must(200, "GET", "/rec?inicio=2026-04-01T00:00:00Z&fim=2026-04-02T00:00:00Z", ""); len(got["recs"].([]any)) != 0 {
		t.Errorf("another window: %v", got["recs"])
	}
	if got := c.must(200, "GET", "/locrec"+q+"&idRecPresente=true", ""); got["parametros"].(map[string]any)["paginacao"].(map[string]any)["quantidadeTotalDeItens"] != 3.0 {
		t.Errorf("locations with a recurrence: %v", got["parametros"])
	}
	for path, typ := range map[string]string{
		"/rec?inicio=2026-03-01T00:00:00Z":                                                        pixsim.ProblemRecQuery,
		"/rec" + q + "&paginacao.paginaAtual=-1":                                                  pixsim.ProblemRecQuery,
		"/rec" + q + "&locationPresente=talvez":                                                   pixsim.ProblemRecQuery,
		"/cobr" + q + "&cpf=123":                                                                  pixsim.ProblemCobRQuery,
		"/cobr" + q + "&idRec=curto":                                                              pixsim.ProblemCobRQuery,
		"/locrec?inicio=2026-03-02T00:00:00Z&fim=2026-03-01T00:00:00Z":                            pixsim.ProblemLocRecQuery,
		"/locrec?inicio=2026-03-01T00:00:00Z&fim=2026-03-03T00:00:00Z&paginacao.itensPorPagina=0": pixsim.ProblemLocRecQuery,
	} {
		if code, p := c.do("GET", path, ""); code != 400 || p["type"] != typ {
			t.Errorf("%s: %d %v, want 400 %s", path, code, p, typ)
		}
	}
}
