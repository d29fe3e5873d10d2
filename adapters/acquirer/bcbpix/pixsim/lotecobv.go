package pixsim

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"time"
)

// The lotecobv problem types.
const (
	ProblemLoteCobVNotFound = problemBase + "LoteCobVNaoEncontrado"
	ProblemLoteCobVInvalid  = problemBase + "LoteCobVOperacaoInvalida"
	ProblemLoteCobVQuery    = problemBase + "LoteCobVConsultaInvalida"
)

// The statuses of a cobv request in a lote.
const (
	LoteProcessing = "EM_PROCESSAMENTO"
	LoteCreated    = "CRIADA"
	LoteRefused    = "NEGADA"
)

// LoteCobV is a lote as GET /lotecobv/{id} answers it (LoteCobVConsultado).
type LoteCobV struct {
	ID        int64          `json:"id"`
	Descricao string         `json:"descricao"`
	Criacao   string         `json:"criacao"`
	CobsV     []LoteCobVItem `json:"cobsv"`
}

// LoteCobVItem is how one cobv request of a lote stands: problema when
// NEGADA, criacao (the cobv's) when CRIADA.
type LoteCobVItem struct {
	TxID     string   `json:"txid"`
	Status   string   `json:"status"`
	Problema *Problem `json:"problema,omitempty"`
	Criacao  string   `json:"criacao,omitempty"`
}

// loteRecord is a lote: its cobv requests in the order the first PUT gave
// them, each with the operation the PSP has yet to decide.
type loteRecord struct {
	id        int64
	descricao string
	at        time.Time
	items     []*loteItem
}

// loteItem is one cobv request of a lote. req is the last full request
// (what a creation asks for); todo, when set, is the operation pending
// since asked (a PUT's full request, or a PATCH's revision).
type loteItem struct {
	txid     string
	status   string
	problema *Problem
	criacao  string
	req      cobvRequest
	todo     *cobvRequest
	full     bool
	asked    time.Time
}

func (l *loteRecord) view() LoteCobV {
	out := LoteCobV{ID: l.id, Descricao: l.descricao, Criacao: stamp(l.at), CobsV: make([]LoteCobVItem, len(l.items))}
	for i, it := range l.items {
		out.CobsV[i] = LoteCobVItem{TxID: it.txid, Status: it.status, Criacao: it.criacao}
		if it.problema != nil {
			p := *it.problema
			out.CobsV[i].Problema = &p
		}
	}
	return out
}

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
		if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) || json.Unmarshal(raw, &it) != nil || !txidRE.MatchString(it.TxID) || seen[it.TxID] {
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

func (s *Server) putLote(w http.ResponseWriter, r *http.Request) {
	descricao, reqs, ok := decodeLote(w, r, true)
	if !ok {
		return
	}
	id, valid := loteID(r.PathValue("id"))
	if !valid {
		problem(w, http.StatusBadRequest, ProblemLoteCobVInvalid, "Lote de cobranças inválido.", "id do lote inválido",
			Violacao{Razao: "o id do lote é um número inteiro positivo", Propriedade: "id"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	l, exists := s.lotes[id]
	if exists {
		if !sameTxIDs(l, reqs) {
			problem(w, http.StatusBadRequest, ProblemLoteCobVInvalid, "Lote de cobranças inválido.",
				"um lote criado não admite cobranças a mais nem a menos: a requisição deve conter exatamente as cobranças do lote",
				Violacao{Razao: "as cobranças não são as do lote", Propriedade: "loteCobV.cobsV"})
			return
		}
	} else {
		for _, q := range reqs {
			if s.txidTakenLocked(q.TxID) {
				problem(w, http.StatusBadRequest, ProblemLoteCobVInvalid, "Lote de cobranças inválido.",
					"ao menos uma das cobranças já existe ou pertence a outro lote",
					Violacao{Razao: "a cobrança " + q.TxID + " já existe", Propriedade: "loteCobV.cobsV"})
				return
			}
		}
		l = &loteRecord{id: id, at: now}
		for _, q := range reqs {
			l.items = append(l.items, &loteItem{txid: q.TxID})
			s.loteOf[q.TxID] = id
		}
		s.lotes[id] = l
		s.loteOrder = append(s.loteOrder, id)
	}
	l.descricao = *descricao
	byTxID := map[string]loteItemRequest{}
	for _, q := range reqs {
		byTxID[q.TxID] = q
	}
	for _, it := range l.items {
		q := byTxID[it.txid].cobvRequest
		it.todo, it.full, it.asked = &q, true, now
		it.status, it.problema = LoteProcessing, nil
	}
	w.WriteHeader(http.StatusAccepted)
	s.decideLoteLater(id)
}

func (s *Server) patchLote(w http.ResponseWriter, r *http.Request) {
	descricao, reqs, ok := decodeLote(w, r, false)
	if !ok {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.findLoteLocked(w, r)
	if l == nil {
		return
	}
	byTxID := map[string]*loteItem{}
	for _, it := range l.items {
		byTxID[it.txid] = it
	}
	for _, q := range reqs {
		if byTxID[q.TxID] == nil {
			problem(w, http.StatusBadRequest, ProblemLoteCobVInvalid, "Lote de cobranças inválido.",
				"um lote criado não admite cobranças a mais: a cobrança não consta do lote",
				Violacao{Razao: "a cobrança " + q.TxID + " não consta do lote", Propriedade: "loteCobV.cobsV"})
			return
		}
	}
	if descricao != nil {
		l.descricao = *descricao
	}
	now := s.now()
	for _, q := range reqs {
		it := byTxID[q.TxID]
		rev := q.cobvRequest
		it.todo, it.full, it.asked = &rev, false, now
		it.status, it.problema = LoteProcessing, nil
	}
	w.WriteHeader(http.StatusAccepted)
	s.decideLoteLater(l.id)
}

func (s *Server) getLote(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.findLoteLocked(w, r); l != nil {
		writeJSON(w, http.StatusOK, l.view())
	}
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
	page, per := 0, 100
	if v := q.Get("paginacao.paginaAtual"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			invalid("paginaAtual não pode ser negativa", "paginacao.paginaAtual")
			return
		}
		page = n
	}
	if v := q.Get("paginacao.itensPorPagina"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			invalid("itensPorPagina deve ser positivo", "paginacao.itensPorPagina")
			return
		}
		per = n
	}
	per = min(per, s.cfg.MaxPageSize)
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

// findLoteLocked is the request's lote, its due decisions made, or nil
// after answering 404.
func (s *Server) findLoteLocked(w http.ResponseWriter, r *http.Request) *loteRecord {
	id, ok := loteID(r.PathValue("id"))
	l := s.lotes[id]
	if !ok || l == nil {
		problem(w, http.StatusNotFound, ProblemLoteCobVNotFound, "Lote não encontrado.", "Lote não encontrado para o id informado.")
		return nil
	}
	s.decideLoteLocked(l, false)
	return l
}

// sameTxIDs reports whether reqs name exactly the cobvs of l.
func sameTxIDs(l *loteRecord, reqs []loteItemRequest) bool {
	if len(reqs) != len(l.items) {
		return false
	}
	a := make([]string, len(reqs))
	for i, q := range reqs {
		a[i] = q.TxID
	}
	b := make([]string, len(l.items))
	for i, it := range l.items {
		b[i] = it.txid
	}
	sort.Strings(a)
	sort.Strings(b)
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// txidTakenLocked reports whether txid names a charge already, or a cobv
// request of a lote: neither can join a new lote.
func (s *Server) txidTakenLocked(txid string) bool {
	_, cob := s.cobs[txid]
	_, cobv := s.cobvs[txid]
	_, lote := s.loteOf[txid]
	return cob || cobv || lote
}

// decideLoteLater decides the lote's pending cobvs after LoteDelay, as
// the PSP does on its own.
func (s *Server) decideLoteLater(id int64) {
	s.later(s.cfg.LoteDelay, func() {
		if l, ok := s.lotes[id]; ok {
			s.decideLoteLocked(l, true)
		}
	})
}

// decideLoteLocked decides the pending cobv requests of l: all of them
// when force, else those asked at least LoteDelay ago.
func (s *Server) decideLoteLocked(l *loteRecord, force bool) {
	now := s.now()
	for _, it := range l.items {
		if it.todo == nil || (!force && now.Before(it.asked.Add(s.cfg.LoteDelay))) {
			continue
		}
		q, full := it.todo, it.full
		it.todo = nil
		it.status, it.problema = LoteCreated, nil
		if p := s.decideLoteItemLocked(it, q, full); p != nil {
			it.status, it.problema = LoteRefused, p
		}
	}
}

// decideLoteItemLocked carries out one cobv request of a lote as PUT or
// PATCH /cobv/{txid} would, and returns the problem those would answer
// when it is refused: a cobv the lote does not hold yet is created (a
// revision of a refused creation completes its last request); one it
// holds is revised.
func (s *Server) decideLoteItemLocked(it *loteItem, q *cobvRequest, full bool) *Problem {
	refused := func(detail string, v ...Violacao) *Problem {
		return &Problem{Type: ProblemCobVInvalid, Title: "Cobrança inválida.", Status: http.StatusBadRequest, Detail: detail, Violacoes: v}
	}
	rec, exists := s.cobvs[it.txid]
	if !exists {
		req := *q
		if !full {
			if v := q.violations(false); len(v) > 0 {
				return refused("A requisição não respeita o schema.", v...)
			}
			req = it.req.merged(q)
		}
		it.req = req // what a later revision completes
		if req.Status != "" {
			return refused("a cobrança não existe e não pode ser removida", Violacao{Razao: "cobrança inexistente", Propriedade: "cobv.status"})
		}
		if v := req.violations(true); len(v) > 0 {
			return refused("A requisição não respeita o schema.", v...)
		}
		rec, v, err := s.newCobVLocked(it.txid, &req)
		switch {
		case err != nil:
			return &Problem{Type: ProblemInternal, Title: "Erro interno", Status: http.StatusInternalServerError}
		case len(v) > 0:
			return refused("A requisição não respeita as regras da cobrança.", v...)
		}
		it.criacao = rec.cur.Calendario.Criacao
		return nil
	}
	if v := q.violations(full); len(v) > 0 {
		return refused("A requisição não respeita o schema.", v...)
	}
	s.expireCobVLocked(rec)
	switch {
	case q.Status == CobRemoved && rec.cur.Status == CobRemoved:
	case rec.cur.Status != CobActive:
		return refused("a cobrança não está ATIVA")
	case q.Status == CobRemoved:
		rec.cur.Status = CobRemoved
		rec.cur.Revisao++
		rec.revs = append(rec.revs, rec.view())
	default:
		saved, savedTerms := rec.cur, rec.terms
		changed, v := rec.apply(q, full)
		if len(v) > 0 {
			rec.cur, rec.terms = saved, savedTerms
			return refused("A requisição não respeita as regras da cobrança.", v...)
		}
		if changed {
			rec.cur.Revisao++
			rec.revs = append(rec.revs, rec.view())
		}
	}
	if full {
		it.req = *q
	}
	it.criacao = rec.cur.Calendario.Criacao
	return nil
}

// merged is r with the members a revision q sends put in its place.
func (r cobvRequest) merged(q *cobvRequest) cobvRequest {
	if q.Calendario != nil {
		r.Calendario = q.Calendario
	}
	if q.Devedor != nil {
		r.Devedor = q.Devedor
	}
	if q.Valor != nil {
		r.Valor = q.Valor
	}
	if q.Chave != nil {
		r.Chave = q.Chave
	}
	if q.SolicitacaoPagador != nil {
		r.SolicitacaoPagador = q.SolicitacaoPagador
	}
	r.Status = q.Status
	return r
}

// Lote returns a lote as GET /lotecobv/{id} answers it, for tests.
func (s *Server) Lote(id int64) (LoteCobV, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.lotes[id]
	if !ok {
		return LoteCobV{}, false
	}
	s.decideLoteLocked(l, false)
	return l.view(), true
}
