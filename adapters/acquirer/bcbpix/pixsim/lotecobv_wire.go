package pixsim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// The lotecobv requests as pixsim reads them: the body of PUT and PATCH
// /lotecobv/{id}, a lote's id, and the query of GET /lotecobv.

// loteItemRequest is one element of a lote's cobsv: a txid and a cobv
// request (CobVSolicitada on PUT, CobVRevisada on PATCH).
type loteItemRequest struct {
	TxID string `json:"txid"`
	cobvRequest
}

// loteViolation names the part of a lote request that breaks the schema.
func loteViolation(prop string) Violacao {
	return Violacao{Razao: "O campo " + prop + " não respeita o _schema_.", Propriedade: prop}
}

// decodeLote reads a lote request: descricao (a string; required by PUT)
// and cobsv (an array of objects each with a valid txid, none twice;
// required and not empty on PUT). It answers 400 itself and returns false
// when the request as a whole breaks the schema; a cobv request that
// breaks a rule of its own is that cobv's refusal (NEGADA), decided with
// the others.
func decodeLote(w http.ResponseWriter, r *http.Request, full bool) (descricao *string, items []loteItemRequest, ok bool) {
	var env map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&env); err != nil || env == nil {
		badJSON(w)
		return nil, nil, false
	}
	invalid := func(v ...Violacao) (*string, []loteItemRequest, bool) {
		problem(w, http.StatusBadRequest, ProblemLoteCobVInvalid, "Lote de cobranças inválido.",
			"A requisição que busca alterar ou criar um lote de cobranças com vencimento não respeita o _schema_ ou está semanticamente errada.", v...)
		return nil, nil, false
	}
	var bad []Violacao
	if raw, sent := env["descricao"]; sent {
		var d string
		if json.Unmarshal(raw, &d) != nil {
			bad = append(bad, loteViolation("loteCobV.descricao"))
		} else {
			descricao = &d
		}
	} else if full {
		bad = append(bad, loteViolation("loteCobV.descricao"))
	}
	var raws []json.RawMessage
	if raw, sent := env["cobsv"]; sent {
		if json.Unmarshal(raw, &raws) != nil {
			bad = append(bad, loteViolation("loteCobV.cobsV"))
		}
	}
	if full && len(raws) == 0 && !containsProp(bad, "loteCobV.cobsV") {
		bad = append(bad, loteViolation("loteCobV.cobsV"))
	}
	seen := map[string]bool{}
	for _, raw := range raws {
		var it loteItemRequest
		// The members sent, as for PATCH /cobv: a revision changes only those.
		if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) || json.Unmarshal(raw, &it) != nil ||
			json.Unmarshal(raw, &it.members) != nil || !txidRE.MatchString(it.TxID) || seen[it.TxID] {
			if !containsProp(bad, "loteCobV.cobsV") {
				bad = append(bad, loteViolation("loteCobV.cobsV"))
			}
			continue
		}
		seen[it.TxID] = true
		items = append(items, it)
	}
	if len(bad) > 0 {
		return invalid(bad...)
	}
	return descricao, items, true
}

func containsProp(v []Violacao, prop string) bool {
	for _, x := range v {
		if x.Propriedade == prop {
			return true
		}
	}
	return false
}

// loteID reads a lote's id: a positive integer written in decimal.
func loteID(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0 && strconv.FormatInt(n, 10) == s
}

// lotePage is the GET /lotecobv answer (LotesCobVConsultados). Lotes is
// never null: an empty page is [].
type lotePage struct {
	Parametros struct {
		Inicio    string         `json:"inicio"`
		Fim       string         `json:"fim"`
		Paginacao map[string]int `json:"paginacao"`
	} `json:"parametros"`
	Lotes []LoteCobV `json:"lotes"`
}

func (s *Server) listLotes(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	invalid := func(detail, prop string) {
		problem(w, http.StatusBadRequest, ProblemLoteCobVQuery, "Consulta inválida.", detail, Violacao{Razao: detail, Propriedade: prop})
	}
	start, err1 := time.Parse(time.RFC3339, q.Get("inicio"))
	end, err2 := time.Parse(time.RFC3339, q.Get("fim"))
	switch {
	case err1 != nil:
		invalid("inicio é obrigatório (RFC 3339)", "inicio")
		return
	case err2 != nil:
		invalid("fim é obrigatório (RFC 3339)", "fim")
		return
	case end.Before(start):
		invalid("fim é anterior a inicio", "fim")
		return
	}
	page, per, bad := s.paging(q)
	if bad != nil {
		invalid(bad.Razao, bad.Propriedade)
		return
	}
	all := []LoteCobV{}
	s.mu.Lock()
	for _, id := range s.loteOrder {
		l := s.lotes[id]
		if l.at.Before(start) || l.at.After(end) {
			continue
		}
		s.decideLoteLocked(l, false)
		all = append(all, l.view())
	}
	s.mu.Unlock()
	pages := max(1, (len(all)+per-1)/per)
	lo, hi := min(page*per, len(all)), min((page+1)*per, len(all))
	var out lotePage
	out.Parametros.Inicio, out.Parametros.Fim = stamp(start), stamp(end)
	out.Parametros.Paginacao = map[string]int{"paginaAtual": page, "itensPorPagina": per,
		"quantidadeDePaginas": pages, "quantidadeTotalDeItens": len(all)}
	out.Lotes = all[lo:hi]
	writeJSON(w, http.StatusOK, out)
}
