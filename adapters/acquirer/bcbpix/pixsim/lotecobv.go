package pixsim

import (
	"net/http"
	"sort"
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
