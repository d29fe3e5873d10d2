package pixsim

import (
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// Paginacao is the page of a list answer.
type Paginacao struct {
	PaginaAtual            int `json:"paginaAtual"`
	ItensPorPagina         int `json:"itensPorPagina"`
	QuantidadeDePaginas    int `json:"quantidadeDePaginas"`
	QuantidadeTotalDeItens int `json:"quantidadeTotalDeItens"`
}

// ListParametros is the "parametros" of GET /rec, /cobr and /locrec: the
// query as understood, and the page.
type ListParametros struct {
	Inicio           string          `json:"inicio"`
	Fim              string          `json:"fim"`
	IDRec            string          `json:"idRec,omitempty"`
	CPF              string          `json:"cpf,omitempty"`
	CNPJ             string          `json:"cnpj,omitempty"`
	Status           string          `json:"status,omitempty"`
	LocationPresente *bool           `json:"locationPresente,omitempty"`
	IDRecPresente    *bool           `json:"idRecPresente,omitempty"`
	Recebedor        *ConvenioFiltro `json:"recebedor,omitempty"`
	Paginacao        Paginacao       `json:"paginacao"`
}

// ConvenioFiltro is the convenio a list was filtered by.
type ConvenioFiltro struct {
	Convenio string `json:"convenio"`
}

var (
	cpfRE  = regexp.MustCompile(`^\d{11}$`)
	cnpjRE = regexp.MustCompile(`^[0-9A-Z]{14}$`)
)

// listQuery is a list request: the creation window, the page and the
// filters, read and checked once.
type listQuery struct {
	inicio, fim time.Time
	page, per   int
	params      ListParametros
}

// parseListQuery reads inicio, fim, paginacao and the filters the list
// takes ("cpf" with "cnpj", "status", "convenio", "idRec",
// "locationPresente", "idRecPresente"; others are ignored); a query that
// breaks a rule is answered 400 with typ, and the request goes no further.
func (s *Server) parseListQuery(w http.ResponseWriter, r *http.Request, typ string, filters ...string) (listQuery, bool) {
	q := r.URL.Query()
	get := func(name string) string {
		if slices.Contains(filters, name) || (name == "cnpj" && slices.Contains(filters, "cpf")) {
			return q.Get(name)
		}
		return ""
	}
	invalid := func(detail, prop string) (listQuery, bool) {
		problem(w, http.StatusBadRequest, typ, "Consulta inválida.", detail, Violacao{Razao: detail, Propriedade: prop})
		return listQuery{}, false
	}
	var lq listQuery
	var err error
	if lq.inicio, err = time.Parse(time.RFC3339, q.Get("inicio")); err != nil {
		return invalid("inicio é obrigatório (RFC 3339)", "inicio")
	}
	if lq.fim, err = time.Parse(time.RFC3339, q.Get("fim")); err != nil {
		return invalid("fim é obrigatório (RFC 3339)", "fim")
	}
	if lq.fim.Before(lq.inicio) {
		return invalid("fim é anterior a inicio", "fim")
	}
	p := &lq.params
	p.Inicio, p.Fim = stamp(lq.inicio), stamp(lq.fim)
	p.CPF, p.CNPJ, p.Status, p.IDRec = get("cpf"), get("cnpj"), get("status"), get("idRec")
	switch c := get("convenio"); {
	case p.CPF != "" && p.CNPJ != "":
		return invalid("cpf e cnpj não podem ser usados juntos", "cpf")
	case p.CPF != "" && !cpfRE.MatchString(p.CPF):
		return invalid("cpf não respeita o schema", "cpf")
	case p.CNPJ != "" && !cnpjRE.MatchString(p.CNPJ):
		return invalid("cnpj não respeita o schema", "cnpj")
	case p.IDRec != "" && !recIDRE.MatchString(p.IDRec):
		return invalid("idRec não respeita o schema", "idRec")
	case len([]rune(c)) > 60:
		return invalid("convenio tem mais de 60 caracteres", "convenio")
	case c != "":
		p.Recebedor = &ConvenioFiltro{Convenio: c}
	}
	for name, dst := range map[string]**bool{"locationPresente": &p.LocationPresente, "idRecPresente": &p.IDRecPresente} {
		if v := get(name); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return invalid(name+" deve ser true ou false", name)
			}
			*dst = &b
		}
	}
	lq.page, lq.per = 0, 100
	if v := q.Get("paginacao.paginaAtual"); v != "" {
		if lq.page, err = strconv.Atoi(v); err != nil || lq.page < 0 {
			return invalid("paginaAtual não pode ser negativa", "paginacao.paginaAtual")
		}
	}
	if v := q.Get("paginacao.itensPorPagina"); v != "" {
		if lq.per, err = strconv.Atoi(v); err != nil || lq.per < 1 {
			return invalid("itensPorPagina deve ser positivo", "paginacao.itensPorPagina")
		}
	}
	lq.per = min(lq.per, s.cfg.MaxPageSize)
	return lq, true
}

// within reports whether t falls in the query's creation window.
func (lq *listQuery) within(t time.Time) bool { return !t.Before(lq.inicio) && !t.After(lq.fim) }

// pageOf cuts the page out of n items and states it in the parameters; a
// query that matches nothing is still one (empty) page.
func (lq *listQuery) pageOf(n int) (lo, hi int) {
	lq.params.Paginacao = Paginacao{PaginaAtual: lq.page, ItensPorPagina: lq.per,
		QuantidadeDePaginas: max(1, (n+lq.per-1)/lq.per), QuantidadeTotalDeItens: n}
	return min(lq.page*lq.per, n), min((lq.page+1)*lq.per, n)
}
