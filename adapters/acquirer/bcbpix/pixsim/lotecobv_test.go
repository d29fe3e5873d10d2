package pixsim_test

// The API Pix rules of lotes of due-date charges (lotecobv) pixsim keeps,
// in our own words, checked over HTTP as a PSP client sees them.

import (
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
)

// loteItem is one element of cobsv: cobvBody (a valid CobVSolicitada)
// with its txid, or with devedor missing when broken.
func loteItem(txid string, broken bool) string {
	body := cobvBody
	if broken {
		body = `{"calendario":{"dataDeVencimento":"2026-03-20"},"valor":{"original":"10.00"},"chave":"k@example.com"}`
	}
	return `{"txid":"` + txid + `",` + strings.TrimPrefix(body, "{")
}

func loteBody(items ...string) string {
	return `{"descricao":"Mensalidades de março","cobsv":[` + strings.Join(items, ",") + `]}`
}

func txids(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = domain.DeriveTxID("pixsim", "lote", prefix, string(rune('a'+i)))
	}
	return out
}

// cobsv is the lote's cobsv by txid.
func cobsv(lote map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	items, _ := lote["cobsv"].([]any)
	for _, it := range items {
		m, _ := it.(map[string]any)
		id, _ := m["txid"].(string)
		out[id] = m
	}
	return out
}

// Rule: PUT /lotecobv/{id} answers 202 without a body; each cobv request
// is decided on its own: CRIADA (with the cobv's criacao, and the cobv
// exists) or NEGADA with the problem PUT /cobv/{txid} would have answered
// (and no cobv exists); GET /lotecobv/{id} answers the lote with its id as
// a number, its descricao and criacao.
func TestLoteCobVDecidesEachCobV(t *testing.T) {
	t.Parallel()
	sim, c, _ := startCobV(t)
	ids := txids("decide", 3)
	code, _, raw := c.raw("PUT", "/lotecobv/4242", loteBody(loteItem(ids[0], false), loteItem(ids[1], true), loteItem(ids[2], false)))
	if code != 202 || raw != "" {
		t.Fatalf("PUT: %d %q, want 202 and no body", code, raw)
	}
	code, lote := c.do("GET", "/lotecobv/4242", "")
	if code != 200 || lote["id"] != 4242.0 || lote["descricao"] != "Mensalidades de março" {
		t.Fatalf("GET: %d %v", code, lote)
	}
	if _, err := time.Parse(time.RFC3339, lote["criacao"].(string)); err != nil {
		t.Errorf("criacao %v: %v", lote["criacao"], err)
	}
	got := cobsv(lote)
	for _, id := range []string{ids[0], ids[2]} {
		if got[id]["status"] != pixsim.LoteCreated || got[id]["criacao"] == nil || got[id]["problema"] != nil {
			t.Errorf("cobv %s: %v, want CRIADA with criacao", id, got[id])
		}
		if cob, ok := sim.CobVByTxID(id); !ok || cob.Status != pixsim.CobActive || cob.PixCopiaECola == "" {
			t.Errorf("the lote's cobv %s: %+v %v", id, cob, ok)
		}
		if code, cob := c.do("GET", "/cobv/"+id, ""); code != 200 || cob["txid"] != id {
			t.Errorf("GET /cobv/%s: %d", id, code)
		}
	}
	neg := got[ids[1]]
	p, _ := neg["problema"].(map[string]any)
	v, _ := p["violacoes"].([]any)
	if neg["status"] != pixsim.LoteRefused || p["type"] != pixsim.ProblemCobVInvalid || p["status"] != 400.0 || len(v) == 0 ||
		!strings.Contains(neg["problema"].(map[string]any)["violacoes"].([]any)[0].(map[string]any)["propriedade"].(string), "cobv.devedor") {
		t.Errorf("the broken cobv: %v, want NEGADA with a CobVOperacaoInvalida naming cobv.devedor", neg)
	}
	if code, _ := c.do("GET", "/cobv/"+ids[1], ""); code != 404 {
		t.Errorf("a refused cobv request made a cobv: %d", code)
	}
	if code, p := c.do("GET", "/lotecobv/4243", ""); code != 404 || p["type"] != pixsim.ProblemLoteCobVNotFound {
		t.Errorf("unknown lote: %d %v", code, p)
	}
	if code, p := c.do("GET", "/lotecobv/abc", ""); code != 404 || p["type"] != pixsim.ProblemLoteCobVNotFound {
		t.Errorf("a lote id that is not a number: %d %v", code, p)
	}
	if n := sim.OperationHits("PUT /lotecobv/{id}"); n != 1 {
		t.Errorf("OperationHits counted %d lote PUTs, want 1", n)
	}
}

// Rule: a cobv request of a lote is EM_PROCESSAMENTO until the PSP decides
// it, and until then no cobv exists (GET /cobv/{txid} does not find it).
func TestLoteCobVIsProcessingUntilDecided(t *testing.T) {
	t.Parallel()
	clock := &simClock{now: time.Date(2026, 3, 2, 15, 0, 0, 0, time.UTC)}
	_, c := startWith(t, pixsim.Config{Now: clock.Now, LoteDelay: time.Hour})
	ids := txids("slow", 2)
	if code, _ := c.do("PUT", "/lotecobv/7", loteBody(loteItem(ids[0], false), loteItem(ids[1], false))); code != 202 {
		t.Fatal("PUT")
	}
	_, lote := c.do("GET", "/lotecobv/7", "")
	for id, it := range cobsv(lote) {
		if it["status"] != pixsim.LoteProcessing || it["criacao"] != nil {
			t.Errorf("%s before the delay: %v", id, it)
		}
	}
	if code, _ := c.do("GET", "/cobv/"+ids[0], ""); code != 404 {
		t.Errorf("a cobv in processing was found: %d", code)
	}
	clock.set(clock.Now().Add(time.Hour))
	_, lote = c.do("GET", "/lotecobv/7", "")
	for id, it := range cobsv(lote) {
		if it["status"] != pixsim.LoteCreated {
			t.Errorf("%s after the delay: %v", id, it)
		}
	}
}

// Rule: a lote request that breaks the schema as a whole is refused with
// 400 LoteCobVOperacaoInvalida naming loteCobV.descricao or loteCobV.cobsV;
// a new lote may not name a charge that exists or belongs to another lote.
func TestLoteCobVRefusesWhatBreaksTheSchema(t *testing.T) {
	t.Parallel()
	_, c, _ := startCobV(t)
	ids := txids("schema", 3)
	if code, _ := c.do("PUT", "/cobv/"+ids[0], cobvBody); code != 201 {
		t.Fatal("cobv")
	}
	if code, _ := c.do("PUT", "/lotecobv/1", loteBody(loteItem(ids[1], false))); code != 202 {
		t.Fatal("lote 1")
	}
	ok := loteItem(ids[2], false)
	for _, tc := range []struct {
		name, id, body, prop string
	}{
		{"no descricao", "2", `{"cobsv":[` + ok + `]}`, "loteCobV.descricao"},
		{"descricao not a string", "2", `{"descricao":5,"cobsv":[` + ok + `]}`, "loteCobV.descricao"},
		{"no cobsv", "2", `{"descricao":"x"}`, "loteCobV.cobsV"},
		{"cobsv empty", "2", `{"descricao":"x","cobsv":[]}`, "loteCobV.cobsV"},
		{"cobsv not an array", "2", `{"descricao":"x","cobsv":{}}`, "loteCobV.cobsV"},
		{"a cobv without txid", "2", `{"descricao":"x","cobsv":[{"valor":{"original":"1.00"}}]}`, "loteCobV.cobsV"},
		{"a txid off the schema", "2", loteBody(loteItem("short", false)), "loteCobV.cobsV"},
		{"a txid twice", "2", loteBody(ok, ok), "loteCobV.cobsV"},
		{"an existing cobv", "2", loteBody(ok, loteItem(ids[0], false)), "loteCobV.cobsV"},
		{"another lote's cobv", "2", loteBody(ok, loteItem(ids[1], false)), "loteCobV.cobsV"},
		{"an id that is not a number", "x1", loteBody(ok), "id"},
	} {
		code, p := c.do("PUT", "/lotecobv/"+tc.id, tc.body)
		v, _ := p["violacoes"].([]any)
		prop := ""
		if len(v) > 0 {
			prop, _ = v[0].(map[string]any)["propriedade"].(string)
		}
		if code != 400 || p["type"] != pixsim.ProblemLoteCobVInvalid || prop != tc.prop {
			t.Errorf("%s: %d %v, want 400 LoteCobVOperacaoInvalida on %s", tc.name, code, p, tc.prop)
		}
	}
	if code, _ := c.do("GET", "/lotecobv/2", ""); code != 404 {
		t.Errorf("a refused lote was kept: %d", code)
	}
}

// Rule: PUT on an existing lote revises its cobvs and must name exactly
// the lote's charges, no more and no fewer; a revision that changes
// nothing keeps each cobv's revisao.
func TestLoteCobVPutAgainRevises(t *testing.T) {
	t.Parallel()
	_, c, _ := startCobV(t)
	ids := txids("again", 2)
	first := loteBody(loteItem(ids[0], false), loteItem(ids[1], false))
	for range 2 {
		if code, _ := c.do("PUT", "/lotecobv/9", first); code != 202 {
			t.Fatal("PUT")
		}
	}
	c.do("GET", "/lotecobv/9", "") // the PSP has decided once this answers
	if _, cob := c.do("GET", "/cobv/"+ids[0], ""); cob["revisao"] != 0.0 {
		t.Errorf("the same lote again revised the cobv: revisao %v", cob["revisao"])
	}
	revised := loteBody(loteItem(ids[1], false), strings.Replace(loteItem(ids[0], false), `"original":"100.00"`, `"original":"120.00"`, 1))
	if code, _ := c.do("PUT", "/lotecobv/9", revised); code != 202 {
		t.Fatal("revision")
	}
	if _, lote := c.do("GET", "/lotecobv/9", ""); cobsv(lote)[ids[0]]["status"] != pixsim.LoteCreated {
		t.Errorf("after the revision: %v", lote)
	}
	_, cob := c.do("GET", "/cobv/"+ids[0], "")
	if cob["revisao"] != 1.0 || cob["valor"].(map[string]any)["original"] != "120.00" {
		t.Errorf("revised cobv: %v", cob)
	}
	extra := txids("again-extra", 1)[0]
	for name, body := range map[string]string{
		"one more":  loteBody(loteItem(ids[0], false), loteItem(ids[1], false), loteItem(extra, false)),
		"one fewer": loteBody(loteItem(ids[0], false)),
	} {
		if code, p := c.do("PUT", "/lotecobv/9", body); code != 400 || p["type"] != pixsim.ProblemLoteCobVInvalid {
			t.Errorf("%s: %d %v", name, code, p)
		}
	}
}

// Rule: PATCH /lotecobv/{id} revises some of the lote's cobvs (answered
// 202): a cobv it holds is revised as PATCH /cobv/{txid} would; a refused
// creation is completed by the revision; a charge the lote does not hold
// is refused, and an unknown lote is 404.
func TestLoteCobVPatch(t *testing.T) {
	t.Parallel()
	_, c, _ := startCobV(t)
	ids := txids("patch", 2)
	if code, _ := c.do("PUT", "/lotecobv/11", loteBody(loteItem(ids[0], false), loteItem(ids[1], true))); code != 202 {
		t.Fatal("PUT")
	}
	patch := `{"cobsv":[{"txid":"` + ids[0] + `","valor":{"original":"90.00"}},` +
		`{"txid":"` + ids[1] + `","devedor":{"cpf":"12345678909","nome":"Fulano de Tal"}}]}`
	if code, _, raw := c.raw("PATCH", "/lotecobv/11", patch); code != 202 || raw != "" {
		t.Fatalf("PATCH: %d %q", code, raw)
	}
	_, lote := c.do("GET", "/lotecobv/11", "")
	got := cobsv(lote)
	if got[ids[0]]["status"] != pixsim.LoteCreated || got[ids[1]]["status"] != pixsim.LoteCreated {
		t.Fatalf("after PATCH: %v", lote)
	}
	if _, cob := c.do("GET", "/cobv/"+ids[0], ""); cob["revisao"] != 1.0 || cob["valor"].(map[string]any)["original"] != "90.00" {
		t.Errorf("revised cobv: %v", cob)
	}
	if code, cob := c.do("GET", "/cobv/"+ids[1], ""); code != 200 || cob["valor"].(map[string]any)["original"] != "10.00" {
		t.Errorf("the completed creation: %d %v", code, cob)
	}
	if code, _ := c.do("PATCH", "/lotecobv/11", `{"cobsv":[{"txid":"`+ids[0]+`","status":"REMOVIDA_PELO_USUARIO_RECEBEDOR"}]}`); code != 202 {
		t.Fatal("removal")
	}
	c.do("GET", "/lotecobv/11", "")
	if _, cob := c.do("GET", "/cobv/"+ids[0], ""); cob["status"] != pixsim.CobRemoved {
		t.Errorf("removed through the lote: %v", cob["status"])
	}
	stranger := txids("patch-stranger", 1)[0]
	if code, p := c.do("PATCH", "/lotecobv/11", `{"cobsv":[{"txid":"`+stranger+`"}]}`); code != 400 || p["type"] != pixsim.ProblemLoteCobVInvalid {
		t.Errorf("a charge the lote does not hold: %d %v", code, p)
	}
	if code, p := c.do("PATCH", "/lotecobv/12", `{"cobsv":[]}`); code != 404 || p["type"] != pixsim.ProblemLoteCobVNotFound {
		t.Errorf("unknown lote: %d %v", code, p)
	}
}

// Rule: GET /lotecobv lists the lotes created between inicio and fim
// (both required, RFC 3339) a page at a time; fim before inicio, a
// negative page or page size are 400 LoteCobVConsultaInvalida; a range
// with no lote is one page holding [].
func TestLoteCobVList(t *testing.T) {
	t.Parallel()
	_, c, _ := startCobV(t)
	for i, id := range []string{"21", "22", "23"} {
		if code, _ := c.do("PUT", "/lotecobv/"+id, loteBody(loteItem(txids("list", 3)[i], false))); code != 202 {
			t.Fatal("PUT")
		}
	}
	q := "/lotecobv?inicio=2026-03-01T00:00:00Z&fim=2026-03-03T00:00:00Z"
	code, page := c.do("GET", q+"&paginacao.itensPorPagina=2&paginacao.paginaAtual=1", "")
	pg := page["parametros"].(map[string]any)["paginacao"].(map[string]any)
	lotes, _ := page["lotes"].([]any)
	if code != 200 || pg["quantidadeDePaginas"] != 2.0 || pg["quantidadeTotalDeItens"] != 3.0 || pg["paginaAtual"] != 1.0 ||
		len(lotes) != 1 || lotes[0].(map[string]any)["id"] != 23.0 {
		t.Fatalf("page 1 of 2: %d %v", code, page)
	}
	if _, page := c.do("GET", q, ""); len(page["lotes"].([]any)) != 3 {
		t.Errorf("the default page: %v", page)
	}
	if code, _, raw := c.raw("GET", "/lotecobv?inicio=2020-01-01T00:00:00Z&fim=2020-01-02T00:00:00Z", ""); code != 200 ||
		!strings.Contains(raw, `"lotes":[]`) || !strings.Contains(raw, `"quantidadeDePaginas":1`) {
		t.Errorf("an empty range: %d %s", code, raw)
	}
	for name, query := range map[string]string{
		"fim before inicio":   "?inicio=2026-03-03T00:00:00Z&fim=2026-03-01T00:00:00Z",
		"no inicio":           "?fim=2026-03-03T00:00:00Z",
		"no fim":              "?inicio=2026-03-01T00:00:00Z",
		"negative page":       "?inicio=2026-03-01T00:00:00Z&fim=2026-03-03T00:00:00Z&paginacao.paginaAtual=-1",
		"negative page size":  "?inicio=2026-03-01T00:00:00Z&fim=2026-03-03T00:00:00Z&paginacao.itensPorPagina=-5",
		"inicio not RFC 3339": "?inicio=ontem&fim=2026-03-03T00:00:00Z",
	} {
		if code, p := c.do("GET", "/lotecobv"+query, ""); code != 400 || p["type"] != pixsim.ProblemLoteCobVQuery {
			t.Errorf("%s: %d %v, want 400 LoteCobVConsultaInvalida", name, code, p)
		}
	}
}
