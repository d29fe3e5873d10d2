package pixsim

import (
	"net/http"
	"time"
)

func (s *Server) getPix(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	p, ok := s.pix[r.PathValue("e2eid")]
	var out Pix
	if ok {
		if s.settleLocked(p, false) {
			s.notifyLocked(p, CauseDevolucao)
		}
		out = copyPix(p)
	}
	s.mu.Unlock()
	if !ok {
		problem(w, http.StatusNotFound, ProblemPixNotFound, "Pix não encontrado.", "")
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// pixPage is the GET /pix answer. Pix is never null: an empty page is [].
type pixPage struct {
	Parametros struct {
		Inicio    string         `json:"inicio"`
		Fim       string         `json:"fim"`
		Paginacao map[string]int `json:"paginacao"`
	} `json:"parametros"`
	Pix []Pix `json:"pix"`
}

func (s *Server) listPix(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	invalid := func(detail, prop string) {
		problem(w, http.StatusBadRequest, ProblemPixQuery, "Consulta inválida.", detail, Violacao{Razao: detail, Propriedade: prop})
	}
	start, err1 := time.Parse(time.RFC3339, q.Get("inicio"))
	end, err2 := time.Parse(time.RFC3339, q.Get("fim"))
	if err1 != nil || err2 != nil {
		invalid("inicio e fim são obrigatórios (RFC 3339)", "inicio")
		return
	}
	if end.Before(start) {
		invalid("fim é anterior a inicio", "fim")
		return
	}
	if q.Get("cpf") != "" && q.Get("cnpj") != "" {
		invalid("cpf e cnpj não podem ser usados juntos", "cpf")
		return
	}
	page, per, bad := s.paging(q)
	if bad != nil {
		invalid(bad.Razao, bad.Propriedade)
		return
	}
	all := []Pix{}
	s.mu.Lock()
	for _, id := range s.pixOrder {
		p := s.pix[id]
		if p.at.Before(start) || p.at.After(end) || !matches(q.Get, p) {
			continue
		}
		if s.settleLocked(p, false) {
			s.notifyLocked(p, CauseDevolucao)
		}
		all = append(all, copyPix(p))
	}
	s.mu.Unlock()
	// A query that matches nothing is still one (empty) page.
	pages := max(1, (len(all)+per-1)/per)
	lo, hi := min(page*per, len(all)), min((page+1)*per, len(all))
	var out pixPage
	out.Parametros.Inicio, out.Parametros.Fim = stamp(start), stamp(end)
	out.Parametros.Paginacao = map[string]int{"paginaAtual": page, "itensPorPagina": per,
		"quantidadeDePaginas": pages, "quantidadeTotalDeItens": len(all)}
	out.Pix = all[lo:hi]
	writeJSON(w, http.StatusOK, out)
}

// matches applies the txid, cpf/cnpj, txIdPresente and devolucaoPresente
// filters of GET /pix.
func matches(get func(string) string, p *Pix) bool {
	if t := get("txid"); t != "" && p.TxID != t {
		return false
	}
	if d := get("cpf"); d != "" && p.payer.CPF != d {
		return false
	}
	if d := get("cnpj"); d != "" && p.payer.CNPJ != d {
		return false
	}
	if v := get("txIdPresente"); v != "" && (v == "true") != (p.TxID != "") {
		return false
	}
	if v := get("devolucaoPresente"); v != "" && (v == "true") != (len(p.Devolucoes) > 0) {
		return false
	}
	return true
}
