package pixsim_test

// Recurring charges (cobr): creation, the payer's PSP scheduling and
// settling or failing their attempts, retries and cancellation.

import (
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
)

// Rule: PUT /cobr/{txid} (or POST /cobr, the PSP choosing the txid)
// answers 201 CRIADA; the payer's PSP schedules it at once (attempt AGND
// AGENDADA for the due date, moved to a business day; the charge ATIVA);
// the debit makes the Pix of the attempt's end-to-end id, listed by GET
// /pix and GET /pix/{e2eid}, and the charge CONCLUIDA.
func TestCobRScheduledAndDebited(t *testing.T) {
	t.Parallel()
	sim, c, clock := startAuto(t, pixsim.Config{})
	idRec := approvedRec(t, c, "NAO_PERMITE")
	txid := domain.DeriveTxID("pixsim", "cobr-1")
	// On Thursday 5 March, a charge due Saturday the 14th: the attempt is
	// for Monday the 16th.
	c.moveClock(clock, time.Date(2026, 3, 5, 15, 0, 0, 0, time.UTC))
	got := c.must(201, "PUT", "/cobr/"+txid, cobrFor(idRec, "2026-03-14", "49.90"))
	if got["status"] != "CRIADA" || str(got, "calendario", "criacao") != "2026-03-05" || got["ajusteDiaUtil"] != true ||
		str(got, "recebedor", "cnpj") == "" || got["politicaRetentativa"] != "NAO_PERMITE" {
		t.Fatalf("PUT /cobr: %v", got)
	}
	cobr, _ := sim.CobRByTxID(txid)
	if cobr.Status != pixsim.CobRAtiva || len(cobr.Tentativas) != 1 || cobr.Tentativas[0].Status != pixsim.TentativaAgendada ||
		cobr.Tentativas[0].Tipo != "AGND" || cobr.Tentativas[0].DataLiquidacao != "2026-03-16" || !domain.ValidEndToEndID(cobr.Tentativas[0].EndToEndID) {
		t.Fatalf("scheduled: %+v", cobr)
	}
	pix := c.must(200, "POST", "/_sim/cobr/debit", `{"txid":"`+txid+`"}`)
	e2e := str(pix, "endToEndId")
	if e2e != cobr.Tentativas[0].EndToEndID || pix["txid"] != txid || pix["valor"] != "49.90" {
		t.Errorf("the Pix: %v", pix)
	}
	got = c.must(200, "GET", "/cobr/"+txid, "")
	if got["status"] != "CONCLUIDA" || strings.Join(statuses(got["atualizacao"]), ",") != "CRIADA,ATIVA,CONCLUIDA" || len(got["pix"].([]any)) != 1 {
		t.Errorf("after the debit: %v", got)
	}
	list := c.must(200, "GET", "/pix?inicio=2026-03-01T00:00:00Z&fim=2026-03-31T00:00:00Z&cpf=12345678909", "")
	if p, _ := list["pix"].([]any); len(p) != 1 || str(p[0].(map[string]any), "endToEndId") != e2e {
		t.Errorf("GET /pix: %v", list)
	}
	c.must(200, "GET", "/pix/"+e2e, "")
	if code, _ := c.do("POST", "/_sim/cobr/debit", `{"txid":"`+txid+`"}`); code != 400 {
		t.Errorf("debiting twice: %d", code)
	}
	if code, p := c.do("GET", "/cobr/"+domain.DeriveTxID("none"), ""); code != 404 || p["type"] != pixsim.ProblemCobRNotFound {
		t.Errorf("unknown txid: %d %v", code, p)
	}
	posted := c.must(201, "POST", "/cobr", cobrFor(approvedRec(t, c, "NAO_PERMITE"), "2026-03-12", "49.90"))
	if len(str(posted, "txid")) != 32 {
		t.Errorf("POST /cobr txid %q", str(posted, "txid"))
	}
}

// Rule: a recurring charge needs an APROVADA recurrence, a due date 2 to
// 10 days ahead and within the recurrence's term, one charge alive per
// cycle, and a free txid; else 400 CobROperacaoInvalida naming the field.
// An amount that differs from the recurrence's fixed one is refused by the
// payer's PSP: attempt and charge REJEITADA with AM09.
func TestCobRRules(t *testing.T) {
	t.Parallel()
	sim, c, _ := startAuto(t, pixsim.Config{})
	idRec := approvedRec(t, c, "NAO_PERMITE")
	created := str(c.must(201, "POST", "/rec", recBody), "idRec")
	taken := domain.DeriveTxID("pixsim", "taken")
	c.must(201, "PUT", "/cobr/"+taken, cobrFor(idRec, "2026-03-10", "49.90"))
	cases := []struct{ name, txid, body, prop string }{
		{"not approved", "", cobrFor(created, "2026-03-10", "49.90"), "cobr.idRec"},
		{"unknown recurrence", "", cobrFor("RN9999999820260302abcdefghijk", "2026-03-10", "49.90"), "cobr.idRec"},
		{"due in a day", "", cobrFor(idRec, "2026-03-03", "49.90"), "cobr.calendario.dataDeVencimento"},
		{"due in 11 days", "", cobrFor(idRec, "2026-03-13", "49.90"), "cobr.calendario.dataDeVencimento"},
		{"same cycle", "", cobrFor(idRec, "2026-03-11", "49.90"), "cobr.calendario.dataDeVencimento"},
		{"txid in use", taken, cobrFor(idRec, "2026-03-12", "49.90"), "cobr.txid"},
		{"amount", "", cobrFor(idRec, "2026-03-12", "49,90"), "cobr.valor"},
		{"account", "", strings.Replace(cobrFor(idRec, "2026-03-12", "49.90"), "CORRENTE", "SALARIO", 1), "cobr.recebedor"},
		{"status", "", strings.Replace(cobrFor(idRec, "2026-03-12", "49.90"), `"ajusteDiaUtil"`, `"status":"ATIVA","ajusteDiaUtil"`, 1), "cobr.status"},
	}
	for i, tc := range cases {
		txid := tc.txid
		if txid == "" {
			txid = domain.DeriveTxID("pixsim", "rule", tc.name)
		}
		code, p := c.do("PUT", "/cobr/"+txid, tc.body)
		v, _ := p["violacoes"].([]any)
		if code != 400 || p["type"] != pixsim.ProblemCobRInvalid || len(v) == 0 || str(v[0].(map[string]any), "propriedade") != tc.prop {
			t.Errorf("case %d %s: %d %v, want 400 on %s", i, tc.name, code, p, tc.prop)
		}
	}
	other := domain.DeriveTxID("pixsim", "other-amount")
	c.must(201, "PUT", "/cobr/"+other, cobrFor(approvedRec(t, c, "NAO_PERMITE"), "2026-03-10", "50.00"))
	got, _ := sim.CobRByTxID(other)
	if got.Status != pixsim.CobRRejeitada || got.Encerramento == nil || got.Encerramento.Rejeicao.Codigo != "AM09" ||
		got.Tentativas[0].Status != pixsim.TentativaRejeitada {
		t.Errorf("another amount than the fixed one: %+v", got)
	}
}

// Rule (PERMITE_3R_7D): a failed attempt leaves the charge ATIVA; the
// receiver asks for a new attempt (NTAG) on a future day within seven
// days of the first, never with one pending, never twice the same day, at
// most three; the payer's PSP may retry the same day (RIFL); a new attempt
// that is debited concludes the charge; with the window gone the charge
// expires.
func TestCobRRetries(t *testing.T) {
	t.Parallel()
	sim, c, clock := startAuto(t, pixsim.Config{})
	idRec := approvedRec(t, c, "PERMITE_3R_7D")
	txid := domain.DeriveTxID("pixsim", "retry")
	c.must(201, "PUT", "/cobr/"+txid, cobrFor(idRec, "2026-03-10", "49.90"))
	retry := func(day string) (int, map[string]any) { return c.do("POST", "/cobr/"+txid+"/retentativa/"+day, "") }
	if code, p := retry("2026-03-12"); code != 400 || p["type"] != pixsim.ProblemCobRInvalid {
		t.Errorf("a retry with the first attempt pending: %d %v", code, p)
	}
	c.moveClock(clock, time.Date(2026, 3, 10, 15, 0, 0, 0, time.UTC))
	got := c.must(200, "POST", "/_sim/cobr/fail", `{"txid":"`+txid+`","intraday":true}`)
	tents, _ := got["tentativas"].([]any)
	if got["status"] != "ATIVA" || len(tents) != 2 || str(tents[0].(map[string]any), "status") != "EXPIRADA" ||
		str(tents[1].(map[string]any), "tipo") != "RIFL" || str(tents[1].(map[string]any), "status") != "AGENDADA" {
		t.Fatalf("failed with a same-day retry: %v", got)
	}
	c.must(200, "POST", "/_sim/cobr/fail", `{"txid":"`+txid+`","codigo":"AM02","descricao":"limite"}`)
	for day, why := range map[string]string{"2026-03-10": "not in the future", "2026-03-18": "beyond seven days", "nope": "not a date"} {
		if code, p := retry(day); code != 400 || p["type"] != pixsim.ProblemCobRInvalid {
			t.Errorf("%s (%s): %d %v", day, why, code, p)
		}
	}
	got = c.must(201, "POST", "/cobr/"+txid+"/retentativa/2026-03-11", "")
	tents, _ = got["tentativas"].([]any)
	if last := tents[len(tents)-1].(map[string]any); str(last, "tipo") != "NTAG" || str(last, "status") != "SOLICITADA" || str(last, "dataLiquidacao") != "2026-03-11" {
		t.Errorf("the new attempt: %v", last)
	}
	c.must(200, "POST", "/_sim/cobr/fail", `{"txid":"`+txid+`"}`)
	if code, _ := retry("2026-03-11"); code != 400 {
		t.Errorf("the same day twice: %d", code)
	}
	c.must(201, "POST", "/cobr/"+txid+"/retentativa/2026-03-12", "")
	c.must(200, "POST", "/_sim/cobr/debit", `{"txid":"`+txid+`"}`)
	if got, _ := sim.CobRByTxID(txid); got.Status != pixsim.CobRConcluida || got.Tentativas[len(got.Tentativas)-1].Status != pixsim.TentativaPaga {
		t.Errorf("a retry debited: %+v", got)
	}
	if code, p := c.do("POST", "/cobr/"+domain.DeriveTxID("none")+"/retentativa/2026-03-12", ""); code != 404 || p["type"] != pixsim.ProblemCobRNotFound {
		t.Errorf("retry of an unknown charge: %d %v", code, p)
	}
	// Three retries, all failed: the charge expires.
	c.moveClock(clock, time.Date(2026, 4, 1, 15, 0, 0, 0, time.UTC))
	three := domain.DeriveTxID("pixsim", "three")
	c.must(201, "PUT", "/cobr/"+three, cobrFor(idRec, "2026-04-10", "49.90"))
	c.must(200, "POST", "/_sim/cobr/fail", `{"txid":"`+three+`"}`)
	if code, _ := c.do("POST", "/cobr/"+three+"/retentativa/2026-04-09", ""); code != 400 {
		t.Errorf("a retry before the first attempt's date: %d", code)
	}
	for _, day := range []string{"2026-04-11", "2026-04-12", "2026-04-13"} {
		c.must(201, "POST", "/cobr/"+three+"/retentativa/"+day, "")
		c.must(200, "POST", "/_sim/cobr/fail", `{"txid":"`+three+`"}`)
	}
	if got, _ := sim.CobRByTxID(three); got.Status != pixsim.CobRExpirada {
		t.Errorf("after three failed retries: %s", got.Status)
	}
	// A failure left without retry expires once the window has gone.
	c.moveClock(clock, time.Date(2026, 5, 1, 15, 0, 0, 0, time.UTC))
	idle := domain.DeriveTxID("pixsim", "idle")
	c.must(201, "PUT", "/cobr/"+idle, cobrFor(idRec, "2026-05-11", "49.90"))
	c.must(200, "POST", "/_sim/cobr/fail", `{"txid":"`+idle+`"}`)
	c.moveClock(clock, time.Date(2026, 5, 18, 15, 0, 0, 0, time.UTC))
	if got := c.must(200, "GET", "/cobr/"+idle, ""); got["status"] != "EXPIRADA" {
		t.Errorf("a week after the failure: %v", got["status"])
	}
}

// Rule (NAO_PERMITE): a failed attempt ends the charge EXPIRADA and no
// retry is accepted; a fatal rejection code ends it REJEITADA.
func TestCobRWithoutRetries(t *testing.T) {
	t.Parallel()
	_, c, _ := startAuto(t, pixsim.Config{})
	idRec := approvedRec(t, c, "NAO_PERMITE")
	txid := domain.DeriveTxID("pixsim", "no-retry")
	c.must(201, "PUT", "/cobr/"+txid, cobrFor(idRec, "2026-03-10", "49.90"))
	if got := c.must(200, "POST", "/_sim/cobr/fail", `{"txid":"`+txid+`"}`); got["status"] != "EXPIRADA" {
		t.Errorf("failed without retries: %v", got["status"])
	}
	if code, p := c.do("POST", "/cobr/"+txid+"/retentativa/2026-03-11", ""); code != 400 || p["type"] != pixsim.ProblemCobRInvalid ||
		!strings.Contains(str(p, "detail"), "política") {
		t.Errorf("a retry under NAO_PERMITE: %d %v", code, p)
	}
	fatal := domain.DeriveTxID("pixsim", "fatal")
	c.must(201, "PUT", "/cobr/"+fatal, cobrFor(approvedRec(t, c, "NAO_PERMITE"), "2026-03-12", "49.90"))
	got := c.must(200, "POST", "/_sim/cobr/fail", `{"txid":"`+fatal+`","codigo":"AC05","descricao":"conta encerrada"}`)
	if got["status"] != "REJEITADA" || str(got, "encerramento", "rejeicao", "codigo") != "AC05" {
		t.Errorf("a fatal code: %v", got)
	}
	if code, _ := c.do("POST", "/_sim/cobr/fail", `{"txid":"`+fatal+`","codigo":"ZZ01"}`); code != 400 {
		t.Errorf("a code outside the list: %d", code)
	}
}

// Rule: the receiver (PATCH status CANCELADA) or the payer (/_sim) cancels
// a recurring charge up to the day before its first attempt's date; on
// that day it is 400 CobROperacaoInvalida.
func TestCobRCancellation(t *testing.T) {
	t.Parallel()
	_, c, clock := startAuto(t, pixsim.Config{})
	idRec := approvedRec(t, c, "NAO_PERMITE")
	mine := domain.DeriveTxID("pixsim", "mine")
	c.must(201, "PUT", "/cobr/"+mine, cobrFor(idRec, "2026-03-10", "49.90"))
	if code, p := c.do("PATCH", "/cobr/"+mine, `{"status":"CONCLUIDA"}`); code != 400 || p["type"] != pixsim.ProblemCobRInvalid {
		t.Errorf("PATCH status CONCLUIDA: %d %v", code, p)
	}
	got := c.must(200, "PATCH", "/cobr/"+mine, `{"status":"CANCELADA"}`)
	if got["status"] != "CANCELADA" || str(got, "encerramento", "cancelamento", "solicitante") != "USUARIO_RECEBEDOR" ||
		str(got, "encerramento", "cancelamento", "codigo") != "SLCR" {
		t.Errorf("cancelled by the receiver: %v", got)
	}
	payers := domain.DeriveTxID("pixsim", "payers")
	c.must(201, "PUT", "/cobr/"+payers, cobrFor(idRec, "2026-03-12", "49.90"))
	got = c.must(200, "POST", "/_sim/cobr/cancel", `{"txid":"`+payers+`"}`)
	if str(got, "encerramento", "cancelamento", "solicitante") != "USUARIO_PAGADOR" || str(got, "encerramento", "cancelamento", "codigo") != "SLBD" {
		t.Errorf("cancelled by the payer: %v", got)
	}
	late := domain.DeriveTxID("pixsim", "late")
	c.moveClock(clock, time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	c.must(201, "PUT", "/cobr/"+late, cobrFor(idRec, "2026-05-08", "49.90"))
	c.moveClock(clock, time.Date(2026, 5, 8, 12, 0, 0, 0, time.UTC))
	if code, p := c.do("PATCH", "/cobr/"+late, `{"status":"CANCELADA"}`); code != 400 || p["type"] != pixsim.ProblemCobRInvalid {
		t.Errorf("cancelled on the settlement day: %d %v", code, p)
	}
	if code, _ := c.do("POST", "/_sim/cobr/cancel", `{"txid":"`+late+`"}`); code != 400 {
		t.Errorf("cancelled by the payer on the settlement day: %d", code)
	}
}
