package pixsim

import (
	"cmp"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// cobvPage is the GET /cobv answer (CobsVConsultadas). Cobs is never
// null: an empty page is [].
type cobvPage struct {
	Parametros cobvQuery `json:"parametros"`
	Cobs       []CobV    `json:"cobs"`
}

// cobvQuery is the answer's parametros (ParametrosConsultaCob): the
// filters as applied and the page.
type cobvQuery struct {
	Inicio           string         `json:"inicio"`
	Fim              string         `json:"fim"`
	CPF              string         `json:"cpf,omitempty"`
	CNPJ             string         `json:"cnpj,omitempty"`
	LocationPresente *bool          `json:"locationPresente,omitempty"`
	Status           string         `json:"status,omitempty"`
	Paginacao        map[string]int `json:"paginacao"`
}

var (
	cpfQueryRE  = regexp.MustCompile(`^\d{11}$`)
	cnpjQueryRE = regexp.MustCompile(`^[0-9A-Z]{14}$`)
)

// listCobV serves GET /cobv: the cobvs created from inicio to fim
// (inclusive, calendario.criacao), oldest first, filtered by the devedor's
// cpf or cnpj, locationPresente and status, paged by
// paginacao.paginaAtual (from 0) and paginacao.itensPorPagina (default
// 100, capped at Config.MaxPageSize). Every violation the API Pix lists
// for it is 400 CobVConsultaInvalida: inicio or fim missing or not RFC
// 3339, fim before inicio, cpf with cnpj, either not in the spec's
// pattern, a negative page, a page size below 1. loteCobVId is refused
// too: pixsim keeps no batches.
func (s *Server) listCobV(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	invalid := func(detail, prop string) {
		problem(w, http.StatusBadRequest, ProblemCobVQuery, "Consulta inválida.", detail, Violacao{Razao: detail, Propriedade: prop})
	}
	start, err1 := time.Parse(time.RFC3339, q.Get("inicio"))
	end, err2 := time.Parse(time.RFC3339, q.Get("fim"))
	out := cobvQuery{CPF: q.Get("cpf"), CNPJ: q.Get("cnpj"), Status: q.Get("status")}
	switch {
	case err1 != nil || err2 != nil:
		invalid("inicio e fim são obrigatórios (RFC 3339)", "inicio")
		return
	case end.Before(start):
		invalid("fim é anterior a inicio", "fim")
		return
	case out.CPF != "" && out.CNPJ != "":
		invalid("cpf e cnpj não podem ser usados juntos", "cpf")
		return
	case out.CPF != "" && !cpfQueryRE.MatchString(out.CPF):
		invalid("cpf não respeita o schema", "cpf")
		return
	case out.CNPJ != "" && !cnpjQueryRE.MatchString(out.CNPJ):
		invalid("cnpj não respeita o schema", "cnpj")
		return
	case q.Has("loteCobVId"):
		invalid("o simulador não filtra por lote", "loteCobVId")
		return
	}
	if v := q.Get("locationPresente"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			invalid("locationPresente deve ser true ou false", "locationPresente")
			return
		}
		out.LocationPresente = &b
	}
	page, per, bad := s.paging(q)
	if bad != nil {
		invalid(bad.Razao, bad.Propriedade)
		return
	}
	type row struct {
		at  time.Time
		cob CobV
	}
	var rows []row
	s.mu.Lock()
	for _, rec := range s.cobvs {
		s.expireCobVLocked(rec)
		at, err := time.Parse(time.RFC3339Nano, rec.cur.Calendario.Criacao)
		if err != nil || at.Before(start) || at.After(end) || !out.matches(rec) {
			continue
		}
		rows = append(rows, row{at, rec.view()})
	}
	s.mu.Unlock()
	slices.SortFunc(rows, func(a, b row) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.cob.TxID, b.cob.TxID)
	})
	// A query that matches nothing is still one (empty) page.
	pages := max(1, (len(rows)+per-1)/per)
	lo, hi := min(page*per, len(rows)), min((page+1)*per, len(rows))
	out.Inicio, out.Fim = stamp(start), stamp(end)
	out.Paginacao = map[string]int{"paginaAtual": page, "itensPorPagina": per,
		"quantidadeDePaginas": pages, "quantidadeTotalDeItens": len(rows)}
	cobs := make([]CobV, 0, hi-lo)
	for _, r := range rows[lo:hi] {
		cobs = append(cobs, r.cob)
	}
	writeJSON(w, http.StatusOK, cobvPage{Parametros: out, Cobs: cobs})
}

// matches applies the cpf, cnpj, locationPresente and status filters.
func (q cobvQuery) matches(rec *cobvRecord) bool {
	switch {
	case q.CPF != "" && rec.cur.Devedor.CPF != q.CPF,
		q.CNPJ != "" && rec.cur.Devedor.CNPJ != q.CNPJ,
		q.Status != "" && rec.cur.Status != q.Status,
		q.LocationPresente != nil && *q.LocationPresente != (rec.cur.Loc != nil):
		return false
	}
	return true
}
