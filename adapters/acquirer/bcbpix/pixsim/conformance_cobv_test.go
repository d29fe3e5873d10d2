package pixsim_test

// The API Pix rules of cobv revisions, the cobv list and the cobv payload
// location that pixsim keeps (docs/bcbpix.md), in our own words, checked
// over HTTP as a PSP client and a payer's bank see them; conformance_test.go
// holds the others.

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
)

// Rule: PATCH /cobv/{txid} revises an ATIVA cobv: revisao grows by one for
// each revision that changes something and not for one that changes
// nothing; every revision stays readable (?revisao=n); members of
// calendario and valor the body leaves out are kept, a rule sent as null
// is removed; a cobv no longer ATIVA is 400 CobVOperacaoInvalida.
func TestPatchCobVRevisesAndKeepsRevisions(t *testing.T) {
	t.Parallel()
	_, c, _ := startCobV(t)
	id := domain.DeriveTxID("pixsim", "patch-cobv")
	if code, _ := c.do("PUT", "/cobv/"+id, cobvBody); code != 201 {
		t.Fatal("create")
	}
	revision := `{"calendario":{"dataDeVencimento":"2026-03-27","validadeAposVencimento":5},
"valor":{"original":"100.00","multa":{"modalidade":1,"valorPerc":"3.00"},"juros":null,"abatimento":null,"desconto":null}}`
	code, cob := c.do("PATCH", "/cobv/"+id, revision)
	cal, _ := cob["calendario"].(map[string]any)
	valor, _ := cob["valor"].(map[string]any)
	if code != 200 || cob["revisao"] != 1.0 || cal["dataDeVencimento"] != "2026-03-27" || cal["validadeAposVencimento"] != 5.0 ||
		valor["juros"] != nil || valor["desconto"] != nil || valor["multa"].(map[string]any)["modalidade"] != 1.0 {
		t.Fatalf("revision: %d %v", code, cob)
	}
	if code, cob := c.do("PATCH", "/cobv/"+id, revision); code != 200 || cob["revisao"] != 1.0 {
		t.Errorf("the same revision again: %d revisao %v, want 200 and still 1", code, cob["revisao"])
	}
	// valor.original alone: the fine stays; validadeAposVencimento stays.
	code, cob = c.do("PATCH", "/cobv/"+id, `{"valor":{"original":"120.00"},"calendario":{"dataDeVencimento":"2026-03-30"}}`)
	cal, _ = cob["calendario"].(map[string]any)
	valor, _ = cob["valor"].(map[string]any)
	if code != 200 || cob["revisao"] != 2.0 || valor["original"] != "120.00" || valor["multa"] == nil || cal["validadeAposVencimento"] != 5.0 {
		t.Errorf("a partial revision: %d %v, want revisao 2 with the fine and validadeAposVencimento kept", code, cob)
	}
	for n, want := range []string{"100.00", "100.00", "120.00"} {
		code, rev := c.do("GET", "/cobv/"+id+"?revisao="+string(rune('0'+n)), "")
		if code != 200 || rev["revisao"] != float64(n) || rev["valor"].(map[string]any)["original"] != want {
			t.Errorf("revision %d: %d %v, want valor.original %s", n, code, rev, want)
		}
	}
	if code, p := c.do("PATCH", "/cobv/"+id, `{"valor":{"desconto":{"modalidade":1,"descontoDataFixa":[{"data":"2026-04-30","valorPerc":"1.00"}]}}}`); code != 400 ||
		p["type"] != pixsim.ProblemCobVInvalid {
		t.Errorf("a discount dated after the due date: %d %v", code, p)
	}
	if code, _ := c.do("POST", "/_sim/pay", `{"txid":"`+id+`"}`); code != 200 {
		t.Fatal("pay")
	}
	if code, p := c.do("PATCH", "/cobv/"+id, `{"valor":{"original":"130.00"}}`); code != 400 || p["type"] != pixsim.ProblemCobVInvalid {
		t.Errorf("PATCH of a CONCLUIDA cobv: %d %v, want 400 CobVOperacaoInvalida", code, p)
	}
}

// cobvList is a GET /cobv answer.
type cobvList struct {
	Parametros struct {
		Inicio, Fim string
		Paginacao   map[string]int `json:"paginacao"`
	} `json:"parametros"`
	Cobs []pixsim.CobV `json:"cobs"`
}

func listCobV(t *testing.T, c *client, query string) (int, cobvList, map[string]any) {
	t.Helper()
	code, _, body := c.raw("GET", "/cobv"+query, "")
	var page cobvList
	var problem map[string]any
	if code == 200 {
		if err := json.Unmarshal([]byte(body), &page); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
	} else {
		_ = json.Unmarshal([]byte(body), &problem)
	}
	return code, page, problem
}

// Rule: GET /cobv lists the cobvs created from inicio to fim, filtered by
// the devedor's cpf or cnpj and by status, in pages (paginacao, with
// quantidadeDePaginas ≥ 1 and cobs always an array); inicio and fim are
// required, fim before inicio, cpf with cnpj and a negative page are 400
// CobVConsultaInvalida; it needs a token like every API call.
func TestListCobV(t *testing.T) {
	t.Parallel()
	clock := &simClock{now: time.Date(2026, 3, 2, 15, 0, 0, 0, time.UTC)}
	_, c := startWith(t, pixsim.Config{MaxPageSize: 2, Now: clock.Now})
	byCNPJ := `{"calendario":{"dataDeVencimento":"2026-03-20"},"devedor":{"cnpj":"11222333000181","nome":"Loja"},
"valor":{"original":"10.00"},"chave":"k@example.com"}`
	var ids []string
	for i := range 4 {
		id := domain.DeriveTxID("pixsim", "list", string(rune('a'+i)))
		body := `{"calendario":{"dataDeVencimento":"2026-03-20"},"devedor":{"cpf":"12345678909","nome":"F"},"valor":{"original":"10.00"},"chave":"k@example.com"}`
		if i == 3 {
			body = byCNPJ
		}
		if code, _ := c.do("PUT", "/cobv/"+id, body); code != 201 {
			t.Fatal("create")
		}
		ids = append(ids, id)
		clock.set(clock.Now().Add(time.Second)) // distinct criacao, so the order is theirs
	}
	c.do("PATCH", "/cobv/"+ids[1], `{"status":"REMOVIDA_PELO_USUARIO_RECEBEDOR"}`)
	const all = "?inicio=2020-01-01T00:00:00Z&fim=2099-12-31T00:00:00Z"
	var seen []string
	for page := range 2 {
		code, p, _ := listCobV(t, c, all+"&paginacao.itensPorPagina=100&paginacao.paginaAtual="+string(rune('0'+page)))
		if code != 200 || p.Parametros.Paginacao["itensPorPagina"] != 2 || p.Parametros.Paginacao["quantidadeDePaginas"] != 2 ||
			p.Parametros.Paginacao["quantidadeTotalDeItens"] != 4 || p.Parametros.Paginacao["paginaAtual"] != page {
			t.Fatalf("page %d: %d %+v", page, code, p.Parametros)
		}
		for _, cob := range p.Cobs {
			seen = append(seen, cob.TxID)
		}
	}
	if len(seen) != 4 || seen[0] != ids[0] || seen[3] != ids[3] {
		t.Errorf("listed %v, want %v in order of creation", seen, ids)
	}
	for _, tc := range []struct {
		query string
		want  int
	}{
		{"&cpf=12345678909", 3}, {"&cnpj=11222333000181", 1}, {"&status=ATIVA", 3},
		{"&status=REMOVIDA_PELO_USUARIO_RECEBEDOR&cpf=12345678909", 1}, {"&locationPresente=true", 4}, {"&locationPresente=false", 0},
	} {
		if code, p, _ := listCobV(t, c, all+tc.query); code != 200 || p.Parametros.Paginacao["quantidadeTotalDeItens"] != tc.want {
			t.Errorf("%s: %d %+v, want %d", tc.query, code, p.Parametros.Paginacao, tc.want)
		}
	}
	code, _, raw := c.raw("GET", "/cobv?inicio=2020-01-01T00:00:00Z&fim=2020-01-02T00:00:00Z", "")
	var empty struct {
		Parametros struct {
			Paginacao map[string]int `json:"paginacao"`
		} `json:"parametros"`
		Cobs json.RawMessage `json:"cobs"`
	}
	if err := json.Unmarshal([]byte(raw), &empty); err != nil || code != 200 || string(empty.Cobs) != "[]" ||
		empty.Parametros.Paginacao["quantidadeDePaginas"] != 1 {
		t.Errorf("an empty list: %d %s, want one page and \"cobs\": []", code, raw)
	}
	for _, q := range []string{"", "?inicio=2020-01-01T00:00:00Z", "?inicio=2020-01-02T00:00:00Z&fim=2020-01-01T00:00:00Z",
		all + "&cpf=12345678909&cnpj=11222333000181", all + "&cpf=123", all + "&paginacao.paginaAtual=-1",
		all + "&paginacao.itensPorPagina=0", all + "&locationPresente=talvez"} {
		if code, _, p := listCobV(t, c, q); code != 400 || p["type"] != pixsim.ProblemCobVQuery {
			t.Errorf("GET /cobv%s: %d %v, want 400 CobVConsultaInvalida", q, code, p)
		}
	}
	c.token = ""
	if code, _, p := listCobV(t, c, all); code != 401 {
		t.Errorf("without a token: %d %v", code, p)
	}
}

// Rule: a cobv's payload location (GET /cobv/{pixUrlAccessToken} under the
// location's host) is open to any client and answers application/jose; a
// DPP that is not a date, before today or after the last payable day, and
// a codMun that is not an IBGE municipality code, are 400
// CobPayloadOperacaoInvalida; an unknown location is 404 and a cobv that
// can no longer be paid 410, both CobPayloadNaoEncontrado.
func TestCobVPayloadLocationRules(t *testing.T) {
	t.Parallel()
	_, c, _ := startCobV(t) // today is 2 March 2026; the cobv is payable until 30 March
	id := domain.DeriveTxID("pixsim", "payload-rules")
	_, cob := c.do("PUT", "/cobv/"+id, cobvBody)
	path := locationPath(t, cob)
	if code, h, body := get(t, c.base+path); code != 200 || h.Get("Content-Type") != "application/jose" {
		t.Fatalf("open read: %d %s %s", code, h.Get("Content-Type"), body)
	}
	for _, q := range []string{"?DPP=2026-03-01", "?DPP=2026-03-31", "?DPP=05/03/2026", "?DPP=", "?codMun=355030",
		"?codMun=9950308", "?codMun=abcdefg"} {
		code, _, body := get(t, c.base+path+q)
		var p map[string]any
		_ = json.Unmarshal([]byte(body), &p)
		if code != 400 || p["type"] != pixsim.ProblemCobPayloadInvalid || p["violacoes"] == nil {
			t.Errorf("%s: %d %s, want 400 CobPayloadOperacaoInvalida naming the violation", q, code, body)
		}
	}
	if code, _, _ := get(t, c.base+path+"?DPP=2026-03-30&codMun=5300108"); code != 200 {
		t.Errorf("the last payable day with Brasília's codMun: %d", code)
	}
	if code, _, body := get(t, c.base+path[:len(path)-4]+"beef"); code != 404 || !json.Valid([]byte(body)) {
		t.Errorf("an unknown location: %d %s, want 404", code, body)
	}
	c.do("PATCH", "/cobv/"+id, `{"status":"REMOVIDA_PELO_USUARIO_RECEBEDOR"}`)
	code, _, body := get(t, c.base+path)
	var p map[string]any
	_ = json.Unmarshal([]byte(body), &p)
	if code != 410 || p["type"] != pixsim.ProblemCobPayloadNotFound {
		t.Errorf("a removed cobv's location: %d %s, want 410 CobPayloadNaoEncontrado", code, body)
	}
}
