package pixsim

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

var (
	decimalRE = regexp.MustCompile(`^\d{1,10}\.\d{2}$`)
	ispbRE    = regexp.MustCompile(`^[0-9A-Z]{8}$`)
)

// periodicidades are the periods a recurrence may have.
var periodicidades = []string{"SEMANAL", "MENSAL", "TRIMESTRAL", "SEMESTRAL", "ANUAL"}

// recRequest is the body of POST /rec (RecSolicitada) and of PATCH
// /rec/{idRec} (RecRevisada: status, vinculo.devedor.nome, loc,
// calendario.dataInicial and ativacao.dadosJornada.txid only).
type recRequest struct {
	Vinculo *struct {
		Objeto   *string `json:"objeto"`
		Contrato *string `json:"contrato"`
		Devedor  *Person `json:"devedor"`
	} `json:"vinculo"`
	Calendario *struct {
		DataInicial   *string `json:"dataInicial"`
		DataFinal     *string `json:"dataFinal"`
		Periodicidade *string `json:"periodicidade"`
	} `json:"calendario"`
	Valor     *RecValor `json:"valor"`
	Recebedor *struct {
		Convenio *string `json:"convenio"`
	} `json:"recebedor"`
	PoliticaRetentativa *string `json:"politicaRetentativa"`
	Loc                 *int64  `json:"loc"`
	Ativacao            *struct {
		DadosJornada *DadosJornada `json:"dadosJornada"`
	} `json:"ativacao"`
	Status *string `json:"status"`
}

// positiveDecimal reports whether v is an amount of the schema
// ("\d{1,10}\.\d{2}") above zero.
func positiveDecimal(v string) bool {
	a, err := domain.ParseDecimal(v)
	return decimalRE.MatchString(v) && err == nil && a > 0
}

// validDoc reports whether the one document given is a valid CPF (11
// digits) or CNPJ (14 of [0-9A-Z]).
func validDoc(cpf, cnpj string) bool {
	if cpf != "" {
		return cpfRE.MatchString(cpf) && domain.ValidCPF(cpf)
	}
	return cnpjRE.MatchString(cnpj) && domain.ValidCNPJ(cnpj)
}

// devedorViolations checks a recurrence's debtor: a valid CPF or CNPJ
// and a name of up to 140 characters.
func devedorViolations(d *Person, prop string) []Violacao {
	bad := func(why string) []Violacao { return []Violacao{{Razao: why, Propriedade: prop}} }
	switch {
	case d == nil:
		return bad("campo obrigatório")
	case (d.CPF == "") == (d.CNPJ == ""):
		return bad("informe cpf ou cnpj")
	case !validDoc(d.CPF, d.CNPJ):
		return bad("documento inválido")
	case d.Nome == "" || len([]rune(d.Nome)) > 140:
		return bad("nome obrigatório, até 140 caracteres")
	}
	return nil
}

// createViolations checks a POST /rec body made on day.
func (q *recRequest) createViolations(day bizdays.Date) []Violacao {
	var v []Violacao
	add := func(prop, why string) { v = append(v, Violacao{Razao: why, Propriedade: prop}) }
	if q.Vinculo == nil {
		add("rec.vinculo", "campo obrigatório")
	} else {
		if c := q.Vinculo.Contrato; c == nil || *c == "" || len([]rune(*c)) > 35 {
			add("rec.vinculo.contrato", "obrigatório, até 35 caracteres")
		}
		if o := q.Vinculo.Objeto; o != nil && len([]rune(*o)) > 35 {
			add("rec.vinculo.objeto", "até 35 caracteres")
		}
		v = append(v, devedorViolations(q.Vinculo.Devedor, "rec.vinculo.devedor")...)
	}
	if c := q.Calendario; c == nil {
		add("rec.calendario", "campo obrigatório")
	} else {
		start, err := parseDay(c.DataInicial)
		switch {
		case err != nil:
			add("rec.calendario.dataInicial", "data obrigatória (AAAA-MM-DD)")
		case start.Before(day):
			add("rec.calendario.dataInicial", "anterior à data de criação da recorrência")
		}
		if c.DataFinal != nil {
			end, err2 := parseDay(c.DataFinal)
			if err2 != nil || (err == nil && end.Before(start)) {
				add("rec.calendario.dataFinal", "data inválida ou anterior a dataInicial")
			}
		}
		if c.Periodicidade == nil || !slices.Contains(periodicidades, *c.Periodicidade) {
			add("rec.calendario.periodicidade", "não respeita o schema")
		}
	}
	if val := q.Valor; val != nil {
		switch {
		case val.ValorRec != "" && val.ValorMinimoRecebedor != "":
			add("rec.valor", "valorRec e valorMinimoRecebedor não podem estar ambos preenchidos")
		case val.ValorRec != "" && !positiveDecimal(val.ValorRec):
			add("rec.valor.valorRec", "não respeita o schema")
		case val.ValorMinimoRecebedor != "" && !positiveDecimal(val.ValorMinimoRecebedor):
			add("rec.valor.valorMinimoRecebedor", "não respeita o schema")
		}
	}
	if rb := q.Recebedor; rb != nil && rb.Convenio != nil && len([]rune(*rb.Convenio)) > 60 {
		add("rec.recebedor.convenio", "até 60 caracteres")
	}
	if p := q.PoliticaRetentativa; p == nil || (*p != RetryNotAllowed && *p != RetryThreeIn7Days) {
		add("rec.politicaRetentativa", "não respeita o schema")
	}
	if a := q.Ativacao; a != nil && a.DadosJornada != nil && !txidRE.MatchString(a.DadosJornada.TxID) {
		add("rec.ativacao.dadosJornada.txid", "não respeita o schema")
	}
	if q.Status != nil {
		add("rec.status", "status não é aceito na criação")
	}
	return v
}

func parseDay(s *string) (bizdays.Date, error) {
	if s == nil {
		return bizdays.Date{}, errMissing
	}
	return bizdays.ParseDate(*s)
}

// locViolationsLocked checks the location a recurrence asks for: it must
// exist and not serve another recurrence.
func (s *Server) locViolationsLocked(id *int64, idRec string) []Violacao {
	if id == nil {
		return nil
	}
	l, ok := s.auto.locs[*id]
	switch {
	case !ok:
		return []Violacao{{Razao: "o location referenciado por rec.loc inexiste", Propriedade: "rec.loc"}}
	case l.idRec != "" && l.idRec != idRec:
		return []Violacao{{Razao: "o location referenciado por rec.loc já está sendo utilizado por outra recorrência", Propriedade: "rec.loc"}}
	}
	return nil
}

// linkLocLocked makes the location id serve rec (0 unlinks).
func (s *Server) linkLocLocked(rec *recRecord, id int64) {
	if old := s.auto.locs[rec.locID]; old != nil {
		old.idRec = ""
	}
	rec.locID = id
	if l := s.auto.locs[id]; l != nil {
		l.idRec = rec.cur.IDRec
	}
}

func recInvalid(w http.ResponseWriter, detail string, v ...Violacao) {
	problem(w, http.StatusBadRequest, ProblemRecInvalid, "Operação inválida.", detail, v...)
}

func (s *Server) postRec(w http.ResponseWriter, r *http.Request) {
	var req recRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		badJSON(w)
		return
	}
	defer s.lockAuto()()
	now := s.now()
	day := today(now)
	v := append(req.createViolations(day), s.locViolationsLocked(req.Loc, "")...)
	if len(v) > 0 {
		recInvalid(w, "A recorrência não respeita o schema.", v...)
		return
	}
	rec := &recRecord{at: now, created: day}
	c := &rec.cur
	c.IDRec = s.newRecID(*req.PoliticaRetentativa, day)
	c.Vinculo = RecVinculo{Contrato: *req.Vinculo.Contrato, Devedor: *req.Vinculo.Devedor}
	if req.Vinculo.Objeto != nil {
		c.Vinculo.Objeto = *req.Vinculo.Objeto
	}
	c.Calendario = RecCalendario{DataInicial: *req.Calendario.DataInicial, Periodicidade: *req.Calendario.Periodicidade}
	if req.Calendario.DataFinal != nil {
		c.Calendario.DataFinal = *req.Calendario.DataFinal
	}
	if req.Valor != nil && (req.Valor.ValorRec != "" || req.Valor.ValorMinimoRecebedor != "") {
		val := *req.Valor
		c.Valor = &val
	}
	c.Recebedor = RecRecebedor{CNPJ: simRecebedor.CNPJ, Nome: simRecebedor.Nome}
	if req.Recebedor != nil && req.Recebedor.Convenio != nil {
		c.Recebedor.Convenio = *req.Recebedor.Convenio
	}
	c.Status, c.PoliticaRetentativa = RecCriada, *req.PoliticaRetentativa
	c.Atualizacao = history(nil, RecCriada, now)
	c.Ativacao.TipoJornada = JornadaAguardando
	if req.Ativacao != nil && req.Ativacao.DadosJornada != nil {
		c.Ativacao.DadosJornada = &DadosJornada{TxID: req.Ativacao.DadosJornada.TxID}
	}
	s.auto.recs[c.IDRec] = rec
	s.auto.recOrder = append(s.auto.recOrder, c.IDRec)
	if req.Loc != nil {
		s.linkLocLocked(rec, *req.Loc)
	}
	writeJSON(w, http.StatusCreated, s.recViewLocked(rec, false))
}

// findRecLocked is the recurrence of the request's {idRec}, or nil after
// answering 404.
func (s *Server) findRecLocked(w http.ResponseWriter, r *http.Request) *recRecord {
	rec, ok := s.auto.recs[r.PathValue("idRec")]
	if !ok {
		problem(w, http.StatusNotFound, ProblemRecNotFound, "Recorrência não encontrada.", "recorrência não encontrada para o idRec informado")
		return nil
	}
	return rec
}

// getRec answers the recurrence with its requests for confirmation and,
// when it has a location, the composite QR code of the journey the txid
// query names (none: journey 2; a cob: 3; a cobv: 4).
func (s *Server) getRec(w http.ResponseWriter, r *http.Request) {
	defer s.lockAuto()()
	rec := s.findRecLocked(w, r)
	if rec == nil {
		return
	}
	qr, bad := s.dadosQRLocked(rec, r.URL.Query().Get("txid"))
	if bad != "" {
		problem(w, http.StatusBadRequest, ProblemRecQuery, "Consulta inválida.", bad, Violacao{Razao: bad, Propriedade: "txid"})
		return
	}
	view := s.recViewLocked(rec, true)
	view.DadosQR = qr
	writeJSON(w, http.StatusOK, view)
}

// recViewLocked is a copy of rec as answered, which the caller may keep;
// full adds its requests for confirmation (solicitacao).
func (s *Server) recViewLocked(rec *recRecord, full bool) Rec {
	out := rec.cur
	out.Atualizacao = slices.Clone(rec.cur.Atualizacao)
	if rec.cur.Valor != nil {
		v := *rec.cur.Valor
		out.Valor = &v
	}
	if rec.cur.Pagador != nil {
		p := *rec.cur.Pagador
		out.Pagador = &p
	}
	out.Encerramento = copyEncerramento(rec.cur.Encerramento)
	if d := rec.cur.Ativacao.DadosJornada; d != nil {
		dd := *d
		out.Ativacao.DadosJornada = &dd
	}
	if l := s.auto.locs[rec.locID]; l != nil {
		lv := s.locRecViewLocked(l)
		out.Loc = &lv
	}
	out.Solicitacao, out.DadosQR = nil, nil
	if full {
		for _, id := range rec.solics {
			out.Solicitacao = append(out.Solicitacao, s.solicViewLocked(s.auto.solics[id]))
		}
	}
	return out
}

func copyEncerramento(e *Encerramento) *Encerramento {
	if e == nil {
		return nil
	}
	out := &Encerramento{}
	if e.Rejeicao != nil {
		r := *e.Rejeicao
		out.Rejeicao = &r
	}
	if e.Cancelamento != nil {
		c := *e.Cancelamento
		out.Cancelamento = &c
	}
	return out
}

// recPage is the GET /rec answer.
type recPage struct {
	Parametros ListParametros `json:"parametros"`
	Recs       []Rec          `json:"recs"`
}

func (s *Server) listRec(w http.ResponseWriter, r *http.Request) {
	lq, ok := s.parseListQuery(w, r, ProblemRecQuery, "cpf", "status", "convenio", "locationPresente")
	if !ok {
		return
	}
	defer s.lockAuto()()
	all := []Rec{}
	for _, id := range s.auto.recOrder {
		rec := s.auto.recs[id]
		c := &rec.cur
		switch {
		case !lq.within(rec.at),
			lq.params.CPF != "" && c.Vinculo.Devedor.CPF != lq.params.CPF,
			lq.params.CNPJ != "" && c.Vinculo.Devedor.CNPJ != lq.params.CNPJ,
			lq.params.Status != "" && c.Status != lq.params.Status,
			lq.params.Recebedor != nil && c.Recebedor.Convenio != lq.params.Recebedor.Convenio,
			lq.params.LocationPresente != nil && *lq.params.LocationPresente != (rec.locID != 0):
			continue
		}
		all = append(all, s.recViewLocked(rec, true))
	}
	lo, hi := lq.pageOf(len(all))
	writeJSON(w, http.StatusOK, recPage{Parametros: lq.params, Recs: all[lo:hi]})
}

// RecByID returns a recurrence as GET /rec/{idRec} answers it (without the
// QR code), for tests.
func (s *Server) RecByID(idRec string) (Rec, bool) {
	defer s.lockAuto()()
	rec, ok := s.auto.recs[idRec]
	if !ok {
		return Rec{}, false
	}
	return s.recViewLocked(rec, true), true
}

// LocRecByID returns a recurrence's payload location, for tests.
func (s *Server) LocRecByID(id int64) (LocRec, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.auto.locs[id]
	if !ok {
		return LocRec{}, false
	}
	return s.locRecViewLocked(l), true
}
