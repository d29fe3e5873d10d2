package pixsim

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

// cobrRequest is the body of PUT /cobr/{txid} and POST /cobr
// (CobRSolicitada) and of PATCH /cobr/{txid} (status CANCELADA only).
type cobrRequest struct {
	IDRec         *string `json:"idRec"`
	InfoAdicional *string `json:"infoAdicional"`
	Calendario    *struct {
		DataDeVencimento *string `json:"dataDeVencimento"`
	} `json:"calendario"`
	Valor *struct {
		Original *string `json:"original"`
	} `json:"valor"`
	AjusteDiaUtil *bool          `json:"ajusteDiaUtil"`
	Recebedor     *CobRRecebedor `json:"recebedor"`
	Devedor       *CobRDevedor   `json:"devedor"`
	Status        *string        `json:"status"`
}

var tiposConta = []string{"CORRENTE", "POUPANCA", "PAGAMENTO"}

func cobrInvalid(w http.ResponseWriter, detail string, v ...Violacao) {
	problem(w, http.StatusBadRequest, ProblemCobRInvalid, "Operação inválida.", detail, v...)
}

// createViolations checks a new recurring charge's body on day: the due
// date must fall 2 to 10 days ahead, when the payer's PSP may still
// schedule it.
func (q *cobrRequest) createViolations(day bizdays.Date) []Violacao {
	var v []Violacao
	add := func(prop, why string) { v = append(v, Violacao{Razao: why, Propriedade: prop}) }
	if q.IDRec == nil || !recIDRE.MatchString(*q.IDRec) {
		add("cobr.idRec", "não respeita o schema")
	}
	if q.InfoAdicional != nil && len([]rune(*q.InfoAdicional)) > 140 {
		add("cobr.infoAdicional", "O campo cobr.infoAdicional não respeita o schema.")
	}
	if q.Status != nil {
		add("cobr.status", "status não é aceito na criação")
	}
	if due, err := cobrDue(q); err != nil {
		add("cobr.calendario", "O objeto cobr.calendario não respeita o schema.")
	} else if due.Before(day) {
		add("cobr.calendario.dataDeVencimento", "O campo cobr.calendario.dataDeVencimento é anterior à data de criação da cobrança.")
	} else if n := due.DaysSince(day); n < minDaysBeforeDue || n > maxDaysBeforeDue {
		add("cobr.calendario.dataDeVencimento", "a instrução de pagamento deve ser enviada de 2 a 10 dias antes do vencimento")
	}
	if q.Valor == nil || q.Valor.Original == nil || !positiveDecimal(*q.Valor.Original) {
		add("cobr.valor", "O campo cobr.valor não respeita o schema.")
	}
	if rb := q.Recebedor; rb == nil || rb.Conta == "" || len(rb.Conta) > 20 || len(rb.Agencia) > 4 || !slices.Contains(tiposConta, rb.TipoConta) {
		add("cobr.recebedor", "O objeto cobr.recebedor não respeita o schema.")
	}
	if d := q.Devedor; d != nil && (len([]rune(d.Logradouro)) > 200 || len([]rune(d.Cidade)) > 200 || len(d.UF) > 2 || len(d.CEP) > 8) {
		add("cobr.devedor", "O objeto cobr.devedor não respeita o schema.")
	}
	return v
}

func cobrDue(q *cobrRequest) (bizdays.Date, error) {
	if q.Calendario == nil {
		return bizdays.Date{}, errMissing
	}
	return parseDay(q.Calendario.DataDeVencimento)
}

// cycleOf is the cycle of rec that day falls in: weeks counted from the
// first payment day, or calendar months, quarters, half-years or years
// counted from its month.
func cycleOf(cal RecCalendario, day bizdays.Date) int {
	start, _ := bizdays.ParseDate(cal.DataInicial)
	months := (day.Year()-start.Year())*12 + int(day.Month()) - int(start.Month())
	switch cal.Periodicidade {
	case "SEMANAL":
		return day.DaysSince(start) / 7
	case "TRIMESTRAL":
		return months / 3
	case "SEMESTRAL":
		return months / 6
	case "ANUAL":
		return months / 12
	}
	return months
}

// recViolationsLocked checks a new recurring charge against its
// recurrence: APROVADA, the due date within its term and no other charge
// alive in the same cycle.
func (s *Server) recViolationsLocked(q *cobrRequest, rec *recRecord) []Violacao {
	bad := func(prop, why string) []Violacao { return []Violacao{{Razao: why, Propriedade: prop}} }
	if rec == nil {
		return bad("cobr.idRec", "recorrência inexistente")
	}
	if rec.cur.Status != RecAprovada {
		return bad("cobr.idRec", "a recorrência não está APROVADA")
	}
	due, _ := cobrDue(q)
	start, _ := bizdays.ParseDate(rec.cur.Calendario.DataInicial)
	end, err := bizdays.ParseDate(rec.cur.Calendario.DataFinal)
	if due.Before(start) || (err == nil && due.After(end)) {
		return bad("cobr.calendario.dataDeVencimento", "fora da vigência da recorrência")
	}
	cycle := cycleOf(rec.cur.Calendario, due)
	for _, txid := range rec.cobrs {
		o := s.auto.cobrs[txid]
		d, _ := bizdays.ParseDate(o.cur.Calendario.DataDeVencimento)
		if o.cur.Status != CobRRejeitada && o.cur.Status != CobRCancelada && cycleOf(rec.cur.Calendario, d) == cycle {
			return bad("cobr.calendario.dataDeVencimento",
				"Existe uma CobR com status diferente de REJEITADA e CANCELADA referente ao mesmo cobr.idRec com calendario.dataDeVencimento no mesmo ciclo.")
		}
	}
	return nil
}

func (s *Server) putCobR(w http.ResponseWriter, r *http.Request) {
	s.createCobR(w, r, r.PathValue("txid"))
}

// postCobR creates a recurring charge whose txid the PSP chooses.
func (s *Server) postCobR(w http.ResponseWriter, r *http.Request) {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	s.createCobR(w, r, hex.EncodeToString(b))
}

// createCobR creates a recurring charge CRIADA and sends its instruction
// to the payer's PSP (attempt AGND SOLICITADA for the due date, moved to
// the next business day when ajusteDiaUtil). The payer's PSP answers at
// once: any later look finds the attempt AGENDADA and the charge ATIVA, or,
// when the amount differs from the recurrence's fixed one, both REJEITADA
// (AM09).
func (s *Server) createCobR(w http.ResponseWriter, r *http.Request, txid string) {
	var req cobrRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		badJSON(w)
		return
	}
	defer s.lockAuto()()
	now := s.now()
	day := today(now)
	v := req.createViolations(day)
	_, isCob := s.cobs[txid]
	_, isCobV := s.cobvs[txid]
	_, isCobR := s.auto.cobrs[txid]
	switch {
	case !txidRE.MatchString(txid):
		v = append(v, Violacao{Razao: "txid não respeita o schema", Propriedade: "cobr.txid"})
	case isCob || isCobV || isCobR:
		v = append(v, Violacao{Razao: "O campo cobr.txid encontra-se em uso.", Propriedade: "cobr.txid"})
	}
	if len(v) > 0 {
		cobrInvalid(w, "A cobrança não respeita o schema.", v...)
		return
	}
	rec := s.auto.recs[*req.IDRec]
	if v := s.recViolationsLocked(&req, rec); len(v) > 0 {
		cobrInvalid(w, "A cobrança não é compatível com a recorrência.", v...)
		return
	}
	due, _ := cobrDue(&req)
	c := &cobrRecord{at: now, due: due}
	cur := &c.cur
	cur.IDRec, cur.TxID, cur.Status, cur.PoliticaRetentativa = rec.cur.IDRec, txid, CobRCriada, rec.cur.PoliticaRetentativa
	cur.Calendario.Criacao, cur.Calendario.DataDeVencimento = day.String(), due.String()
	cur.Valor.Original = *req.Valor.Original
	cur.AjusteDiaUtil = req.AjusteDiaUtil == nil || *req.AjusteDiaUtil
	if cur.AjusteDiaUtil && !bizdays.IsBusinessDay(due) {
		c.due = bizdays.NextBusinessDay(due)
	}
	if req.InfoAdicional != nil {
		cur.InfoAdicional = *req.InfoAdicional
	}
	if req.Devedor != nil {
		d := *req.Devedor
		cur.Devedor = &d
	}
	cur.Recebedor = CobRRecebedor{Agencia: req.Recebedor.Agencia, Conta: req.Recebedor.Conta, TipoConta: req.Recebedor.TipoConta,
		CNPJ: simRecebedor.CNPJ, Nome: simRecebedor.Nome}
	cur.Atualizacao = history(nil, CobRCriada, now)
	s.auto.cobrs[txid] = c
	s.auto.cobrOrder = append(s.auto.cobrOrder, txid)
	rec.cobrs = append(rec.cobrs, txid)
	t := s.addTentativaLocked(c, TentativaAgendamento, c.due)
	writeJSON(w, http.StatusCreated, cobrView(c))
	if fixed := rec.cur.Valor; fixed != nil && fixed.ValorRec != "" && !sameAmount(fixed.ValorRec, cur.Valor.Original) {
		s.rejectTentativaLocked(c, t, Rejeicao{Codigo: "AM09", Descricao: "valor diferente do valor fixo da recorrência"})
	} else {
		s.setTentativaLocked(t, TentativaAgendada)
		s.setCobRStatusLocked(c, CobRAtiva)
	}
	s.notifyCobRLocked(c)
}

// sameAmount reports whether two decimal amounts are the same number of
// centavos.
func sameAmount(a, b string) bool {
	x, err1 := domain.ParseDecimal(a)
	y, err2 := domain.ParseDecimal(b)
	return err1 == nil && err2 == nil && x == y
}

// findCobRLocked is the request's {txid}, or nil after answering 404.
func (s *Server) findCobRLocked(w http.ResponseWriter, r *http.Request) *cobrRecord {
	c, ok := s.auto.cobrs[r.PathValue("txid")]
	if !ok {
		problem(w, http.StatusNotFound, ProblemCobRNotFound, "Cobrança não encontrada.", "cobrança recorrente não encontrada para o txid informado")
		return nil
	}
	return c
}

func (s *Server) getCobR(w http.ResponseWriter, r *http.Request) {
	defer s.lockAuto()()
	if c := s.findCobRLocked(w, r); c != nil {
		writeJSON(w, http.StatusOK, cobrView(c))
	}
}

// patchCobR cancels a recurring charge as the receiving user, up to the
// day before its first attempt's settlement date.
func (s *Server) patchCobR(w http.ResponseWriter, r *http.Request) {
	var req cobrRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		badJSON(w)
		return
	}
	defer s.lockAuto()()
	c := s.findCobRLocked(w, r)
	if c == nil {
		return
	}
	others := req.IDRec != nil || req.InfoAdicional != nil || req.Calendario != nil || req.Valor != nil ||
		req.AjusteDiaUtil != nil || req.Recebedor != nil || req.Devedor != nil
	if req.Status == nil || *req.Status != CobRCancelada || others {
		cobrInvalid(w, "A revisão da cobrança só aceita status CANCELADA.",
			Violacao{Razao: "status só aceita CANCELADA", Propriedade: "cobr.status"})
		return
	}
	if err := s.cancellableLocked(c); err != "" {
		cobrInvalid(w, err, Violacao{Razao: err, Propriedade: "cobr.status"})
		return
	}
	s.cancelCobRLocked(c, UsuarioRecebedor, cobrCancelByPayee, "Cancelamento solicitado pelo usuário recebedor")
	writeJSON(w, http.StatusOK, cobrView(c))
}

// cancellableLocked says why c cannot be cancelled now ("" when it can):
// it ended, or its first attempt's settlement day has come.
func (s *Server) cancellableLocked(c *cobrRecord) string {
	if cobrEnded(c.cur.Status) {
		return "a cobrança está " + c.cur.Status + " e não pode ser cancelada"
	}
	if first, err := bizdays.ParseDate(c.tents[0].DataLiquidacao); err == nil && !today(s.now()).Before(first) {
		return "Não é possível cancelar uma cobrança em uma data igual ou maior que a data prevista da primeira tentativa de liquidação."
	}
	return ""
}

// cobrPage is the GET /cobr answer.
type cobrPage struct {
	Parametros ListParametros `json:"parametros"`
	CobsR      []CobR         `json:"cobsr"`
}

func (s *Server) listCobR(w http.ResponseWriter, r *http.Request) {
	lq, ok := s.parseListQuery(w, r, ProblemCobRQuery, "cpf", "status", "convenio", "idRec")
	if !ok {
		return
	}
	defer s.lockAuto()()
	all := []CobR{}
	for _, txid := range s.auto.cobrOrder {
		c := s.auto.cobrs[txid]
		rec := s.auto.recs[c.cur.IDRec].cur
		switch p := &lq.params; {
		case !lq.within(c.at),
			p.IDRec != "" && c.cur.IDRec != p.IDRec,
			p.CPF != "" && rec.Vinculo.Devedor.CPF != p.CPF,
			p.CNPJ != "" && rec.Vinculo.Devedor.CNPJ != p.CNPJ,
			p.Status != "" && c.cur.Status != p.Status,
			p.Recebedor != nil && rec.Recebedor.Convenio != p.Recebedor.Convenio:
			continue
		}
		all = append(all, cobrView(c))
	}
	lo, hi := lq.pageOf(len(all))
	writeJSON(w, http.StatusOK, cobrPage{Parametros: lq.params, CobsR: all[lo:hi]})
}

// cobrView is a copy of c as answered, which the caller may keep.
func cobrView(c *cobrRecord) CobR {
	out := c.cur
	out.Atualizacao = slices.Clone(c.cur.Atualizacao)
	out.Encerramento = copyEncerramento(c.cur.Encerramento)
	out.Pix = copyPixes(c.cur.Pix)
	if c.cur.Devedor != nil {
		d := *c.cur.Devedor
		out.Devedor = &d
	}
	out.Tentativas = nil
	for _, t := range c.tents {
		tt := *t
		tt.Atualizacao = slices.Clone(t.Atualizacao)
		if t.Rejeicao != nil {
			rj := *t.Rejeicao
			tt.Rejeicao = &rj
		}
		out.Tentativas = append(out.Tentativas, tt)
	}
	return out
}

// CobRByTxID returns a recurring charge as GET /cobr/{txid} answers it,
// for tests.
func (s *Server) CobRByTxID(txid string) (CobR, bool) {
	defer s.lockAuto()()
	c, ok := s.auto.cobrs[txid]
	if !ok {
		return CobR{}, false
	}
	return cobrView(c), true
}
