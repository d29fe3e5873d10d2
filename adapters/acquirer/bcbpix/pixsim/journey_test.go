package pixsim_test

// The activation journeys of a recurrence and who ends it, driven from the
// payer's side through /_sim.

import (
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
)

const solicBody = `{"idRec":"%s","calendario":{"dataExpiracaoSolicitacao":"2026-03-05T12:00:00Z"},
"destinatario":{"agencia":"0001","conta":"998877","ispbParticipante":"12345678","cpf":"12345678909"}}`

func solicFor(idRec string) string { return strings.Replace(solicBody, "%s", idRec, 1) }

// Rule (journey 1): POST /solicrec answers 201 CRIADA with the payload the
// payer's PSP gets; the PSP sends it at once (ENVIADA, RECEBIDA); only one
// may be open per recurrence; the payer's acceptance makes the request
// ACEITA and the recurrence APROVADA by JORNADA_1 with the payer's account.
func TestJourney1Accepted(t *testing.T) {
	t.Parallel()
	sim, c, _ := startAuto(t, pixsim.Config{})
	idRec := str(c.must(201, "POST", "/rec", recBody), "idRec")
	sol := c.must(201, "POST", "/solicrec", solicFor(idRec))
	id := str(sol, "idSolicRec")
	if len(id) != 29 || !strings.HasPrefix(id, "SC99999998") || sol["status"] != "CRIADA" || str(sol, "recPayload", "idRec") != idRec {
		t.Fatalf("POST /solicrec: %v", sol)
	}
	got := c.must(200, "GET", "/solicrec/"+id, "")
	if h := strings.Join(statuses(got["atualizacao"]), ","); got["status"] != "RECEBIDA" || h != "CRIADA,ENVIADA,RECEBIDA" {
		t.Errorf("after sending: %v %s", got["status"], h)
	}
	if code, p := c.do("POST", "/solicrec", solicFor(idRec)); code != 400 || p["type"] != pixsim.ProblemSolicRecInvalid {
		t.Errorf("a second open request: %d %v", code, p)
	}
	rec := c.must(200, "POST", "/_sim/solicrec/accept", `{"idSolicRec":"`+id+`","codMun":"3550308"}`)
	if rec["status"] != "APROVADA" || str(rec, "ativacao", "tipoJornada") != "JORNADA_1" || str(rec, "pagador", "ispbParticipante") != "12345678" ||
		str(rec, "pagador", "cpf") != "12345678909" || str(rec, "pagador", "codMun") != "3550308" {
		t.Errorf("accepted: %v", rec)
	}
	if s, _ := sim.SolicRecByID(id); s.Status != pixsim.SolicRecAceita {
		t.Errorf("request %s, want ACEITA", s.Status)
	}
	if code, p := c.do("PATCH", "/solicrec/"+id, `{"status":"CANCELADA"}`); code != 400 || p["type"] != pixsim.ProblemSolicRecInvalid {
		t.Errorf("cancelling an ACEITA request: %d %v", code, p)
	}
	if code, _ := c.do("POST", "/_sim/solicrec/accept", `{"idSolicRec":"`+id+`"}`); code != 400 {
		t.Errorf("accepting twice: %d", code)
	}
	if code, p := c.do("GET", "/solicrec/SC999999982026030200000000000", ""); code != 404 || p["type"] != pixsim.ProblemSolicRecNotFound {
		t.Errorf("unknown request: %d %v", code, p)
	}
	if code, p := c.do("POST", "/solicrec", solicFor("RN9999999820260302abcdefghijk")); code != 404 || p["type"] != pixsim.ProblemRecNotFound {
		t.Errorf("a request for an unknown recurrence: %d %v", code, p)
	}
}

// Rule: the payer refusing a request makes it and its recurrence
// REJEITADA (encerramento.rejeicao AP13 or AP14); a request left past
// dataExpiracaoSolicitacao expires with its recurrence; one the receiver
// cancels leaves the recurrence CRIADA for a new request.
func TestJourney1RefusedExpiredCancelled(t *testing.T) {
	t.Parallel()
	_, c, clock := startAuto(t, pixsim.Config{})
	refused := str(c.must(201, "POST", "/rec", recBody), "idRec")
	sol := str(c.must(201, "POST", "/solicrec", solicFor(refused)), "idSolicRec")
	rec := c.must(200, "POST", "/_sim/solicrec/reject", `{"idSolicRec":"`+sol+`","codigo":"AP13"}`)
	if rec["status"] != "REJEITADA" || str(rec, "encerramento", "rejeicao", "codigo") != "AP13" {
		t.Errorf("refused: %v", rec)
	}
	if code, _ := c.do("POST", "/_sim/solicrec/reject", `{"idSolicRec":"`+sol+`","codigo":"XX99"}`); code != 400 {
		t.Errorf("a code outside the list: %d", code)
	}
	cancelled := str(c.must(201, "POST", "/rec", recBody), "idRec")
	sol = str(c.must(201, "POST", "/solicrec", solicFor(cancelled)), "idSolicRec")
	if got := c.must(201, "PATCH", "/solicrec/"+sol, `{"status":"CANCELADA"}`); got["status"] != "CANCELADA" {
		t.Errorf("cancelled request: %v", got)
	}
	if code, p := c.do("PATCH", "/solicrec/"+sol, `{"status":"ACEITA"}`); code != 400 || p["type"] != pixsim.ProblemSolicRecInvalid {
		t.Errorf("PATCH status ACEITA: %d %v", code, p)
	}
	again := str(c.must(201, "POST", "/solicrec", solicFor(cancelled)), "idSolicRec")
	expiring := str(c.must(201, "POST", "/rec", recBody), "idRec")
	late := str(c.must(201, "POST", "/solicrec", solicFor(expiring)), "idSolicRec")
	c.moveClock(clock, time.Date(2026, 3, 5, 12, 0, 0, 0, time.UTC))
	if got := c.must(200, "GET", "/solicrec/"+late, ""); got["status"] != "EXPIRADA" {
		t.Errorf("past its expiry: %v", got["status"])
	}
	if got := c.must(200, "GET", "/rec/"+expiring, ""); got["status"] != "EXPIRADA" {
		t.Errorf("its recurrence: %v", got["status"])
	}
	if got := c.must(200, "GET", "/solicrec/"+again, ""); got["status"] != "EXPIRADA" {
		t.Errorf("the second request: %v", got["status"])
	}
	for name, body := range map[string]string{
		"expired already":     solicFor(str(c.must(201, "POST", "/rec", recBody), "idRec")),
		"no destinatario":     `{"idRec":"` + cancelled + `","calendario":{"dataExpiracaoSolicitacao":"2026-03-09T00:00:00Z"}}`,
		"an ended recurrence": strings.Replace(solicFor(refused), "2026-03-05T12:00:00Z", "2026-03-09T00:00:00Z", 1),
	} {
		if code, p := c.do("POST", "/solicrec", body); code != 400 || p["type"] != pixsim.ProblemSolicRecInvalid {
			t.Errorf("%s: %d %v", name, code, p)
		}
	}
}

// Rule (journeys 2 to 4): the payer approves a recurrence read from its
// QR code; journey 3 pays the immediate charge of ativacao.dadosJornada
// and approves in one step (the cob CONCLUIDA, its Pix listed), journey 4
// pays a cobv and opts in; a recurrence without location cannot be
// approved by QR code.
func TestJourneysByQRCode(t *testing.T) {
	t.Parallel()
	sim, c, _ := startAuto(t, pixsim.Config{})
	newLoc := func() string { return jsonNum(c.must(201, "POST", "/locrec", "")["id"]) }
	j2 := str(c.must(201, "POST", "/rec", recWith("NAO_PERMITE", `"loc":`+newLoc())), "idRec")
	rec := c.must(200, "POST", "/_sim/rec/approve", `{"idRec":"`+j2+`","ispb":"87654321"}`)
	if rec["status"] != "APROVADA" || str(rec, "ativacao", "tipoJornada") != "JORNADA_2" || str(rec, "pagador", "ispbParticipante") != "87654321" {
		t.Errorf("journey 2: %v", rec)
	}
	cob := domain.DeriveTxID("pixsim", "j3")
	c.must(201, "PUT", "/cob/"+cob, cobBody)
	j3 := str(c.must(201, "POST", "/rec", recWith("NAO_PERMITE", `"loc":`+newLoc()+`,"ativacao":{"dadosJornada":{"txid":"`+cob+`"}}`)), "idRec")
	rec = c.must(200, "POST", "/_sim/rec/approve", `{"idRec":"`+j3+`"}`)
	if rec["status"] != "APROVADA" || str(rec, "ativacao", "tipoJornada") != "JORNADA_3" || str(rec, "ativacao", "dadosJornada", "txid") != cob {
		t.Errorf("journey 3: %v", rec)
	}
	if got, _ := sim.CobByTxID(cob); got.Status != pixsim.CobConcluded || len(got.Pix) != 1 || got.Pix[0].Valor != "10.00" {
		t.Errorf("journey 3's cob: %s %v", got.Status, got.Pix)
	}
	cobv := domain.DeriveTxID("pixsim", "j4")
	c.must(201, "PUT", "/cobv/"+cobv, cobvBody)
	j4 := str(c.must(201, "POST", "/rec", recWith("NAO_PERMITE", `"loc":`+newLoc())), "idRec")
	rec = c.must(200, "POST", "/_sim/rec/approve", `{"idRec":"`+j4+`","txid":"`+cobv+`"}`)
	if str(rec, "ativacao", "tipoJornada") != "JORNADA_4" || rec["ativacao"].(map[string]any)["dadosJornada"] != nil {
		t.Errorf("journey 4: %v", rec)
	}
	if got, _ := sim.CobVByTxID(cobv); got.Status != pixsim.CobConcluded {
		t.Errorf("journey 4's cobv: %s", got.Status)
	}
	noLoc := str(c.must(201, "POST", "/rec", recBody), "idRec")
	if code, _ := c.do("POST", "/_sim/rec/approve", `{"idRec":"`+noLoc+`"}`); code != 400 {
		t.Errorf("approving a recurrence without location: %d", code)
	}
	unpaid := domain.DeriveTxID("pixsim", "j3-removed")
	c.must(201, "PUT", "/cob/"+unpaid, cobBody)
	c.must(200, "PATCH", "/cob/"+unpaid, `{"status":"REMOVIDA_PELO_USUARIO_RECEBEDOR"}`)
	j3bad := str(c.must(201, "POST", "/rec", recWith("NAO_PERMITE", `"loc":`+newLoc()+`,"ativacao":{"dadosJornada":{"txid":"`+unpaid+`"}}`)), "idRec")
	if code, _ := c.do("POST", "/_sim/rec/approve", `{"idRec":"`+j3bad+`"}`); code != 400 {
		t.Errorf("journey 3 with a cob that cannot be paid: %d", code)
	}
	if r, _ := sim.RecByID(j3bad); r.Status != pixsim.RecCriada {
		t.Errorf("its recurrence: %s, want CRIADA", r.Status)
	}
	refused := str(c.must(201, "POST", "/rec", recWith("NAO_PERMITE", `"loc":`+newLoc())), "idRec")
	if rec := c.must(200, "POST", "/_sim/rec/reject", `{"idRec":"`+refused+`"}`); str(rec, "encerramento", "rejeicao", "codigo") != "AP14" {
		t.Errorf("refused by QR code: %v", rec)
	}
	expired := str(c.must(201, "POST", "/rec", recBody), "idRec")
	if rec := c.must(200, "POST", "/_sim/rec/expire", `{"idRec":"`+expired+`"}`); rec["status"] != "EXPIRADA" {
		t.Errorf("expired: %v", rec)
	}
}

// Rule: the payer (or its PSP) revokes an approved recurrence: CANCELADA
// with encerramento.cancelamento naming who and why, its open recurring
// charges cancelled (SLBD); a recurrence not APROVADA cannot be revoked.
func TestPayerRevokesRecurrence(t *testing.T) {
	t.Parallel()
	sim, c, _ := startAuto(t, pixsim.Config{})
	id := approvedRec(t, c, "NAO_PERMITE")
	txid := domain.DeriveTxID("pixsim", "revoked")
	c.must(201, "PUT", "/cobr/"+txid, cobrFor(id, "2026-03-10", "49.90"))
	rec := c.must(200, "POST", "/_sim/rec/cancel", `{"idRec":"`+id+`"}`)
	if rec["status"] != "CANCELADA" || str(rec, "encerramento", "cancelamento", "solicitante") != "USUARIO_PAGADOR" ||
		str(rec, "encerramento", "cancelamento", "codigo") != "SLDB" {
		t.Errorf("revoked: %v", rec)
	}
	cobr, _ := sim.CobRByTxID(txid)
	if cobr.Status != pixsim.CobRCancelada || cobr.Encerramento == nil || cobr.Encerramento.Cancelamento.Codigo != "SLBD" ||
		cobr.Tentativas[0].Status != pixsim.TentativaCancelada {
		t.Errorf("its charge: %+v", cobr)
	}
	if code, _ := c.do("POST", "/_sim/rec/cancel", `{"idRec":"`+id+`"}`); code != 400 {
		t.Errorf("revoking twice: %d", code)
	}
	other := approvedRec(t, c, "NAO_PERMITE")
	rec = c.must(200, "POST", "/_sim/rec/cancel", `{"idRec":"`+other+`","solicitante":"PSP_PAGADOR","codigo":"FRUD"}`)
	if str(rec, "encerramento", "cancelamento", "solicitante") != "PSP_PAGADOR" || str(rec, "encerramento", "cancelamento", "codigo") != "FRUD" {
		t.Errorf("revoked by the PSP: %v", rec)
	}
	if code, _ := c.do("POST", "/_sim/rec/cancel", `{"idRec":"`+str(c.must(201, "POST", "/rec", recBody), "idRec")+`"}`); code != 400 {
		t.Errorf("revoking a CRIADA recurrence: %d", code)
	}
}
