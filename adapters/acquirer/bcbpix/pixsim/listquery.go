package pixsim

import (
	"net/http"
	"net/url"
	"regexp"
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
	q           url.Values
	params      ListParametros
}

// parseListQuery reads inicio, fim, paginacao, cpf/cnpj, status, convenio
// and the boolean filters named in bools; a query that breaks a rule is
// answered 400 with typ, and the request goes no further.
func (s *Server) parseListQuery(w http.ResponseWriter, r *http.Request, typ string, bools ...string) (listQuery, bool) {
	q := r.URL.Query()
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
	cpf, cnpj := q.Get("cpf"), q.Get("cnpj")
	switch {
	case cpf != "" && cnpj != "":
		return invalid("cpf e cnpj não podem ser usados juntos", "cpf")
	case cpf != "" && !cpfRE.MatchString(cpf):
		return invalid("cpf não respeita o schema", "cpf")
	case cnpj != "" && !cnpjRE.MatchString(cnpj):
		return invalid("cnpj não respeita o schema", "cnpj")
	case len([]rune(q.Get("convenio"))) > 60:
		return invalid("convenio tem mais de 60 caracteres", "convenio")
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
	lq.q = q
	p := &lq.params
	p.Inicio, p.Fim, p.CPF, p.CNPJ, p.Status, p.IDRec = stamp(lq.inicio), stamp(lq.fim), cpf, cnpj, q.Get("status"), q.Get("idRec")
	if c := q.Get("convenio"); c != "" {
		p.Recebedor = &ConvenioFiltro{Convenio: c}
	}
	for _, name := range bools {
		v := q.Get(name)
		if v == "" {
			continue
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return invalid(name+" deve ser true ou false", name)
		}
		switch name {
		case "locationPresente":
			p.LocationPresente = &b
		case "idRecPresente":
			p.IDRecPresente = &b
		}
	}
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
