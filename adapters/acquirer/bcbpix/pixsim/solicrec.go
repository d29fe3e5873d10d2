package pixsim

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"
)

// solicRecRequest is the body of POST /solicrec (SolicRecSolicitada) and
// of PATCH /solicrec/{idSolicRec} (status CANCELADA only).
type solicRecRequest struct {
	IDRec      *string `json:"idRec"`
	Calendario *struct {
		DataExpiracaoSolicitacao *string `json:"dataExpiracaoSolicitacao"`
	} `json:"calendario"`
	Destinatario *Destinatario `json:"destinatario"`
	Status       *string       `json:"status"`
}

// solicOpen reports whether a request for confirmation still awaits the
// payer (and may be cancelled by the receiver).
func solicOpen(status string) bool {
	return status == SolicRecCriada || status == SolicRecEnviada || status == SolicRecRecebida
}

func solicInvalid(w http.ResponseWriter, detail string, v ...Violacao) {
	problem(w, http.StatusBadRequest, ProblemSolicRecInvalid, "Operação inválida.", detail, v...)
}

// destinatarioViolations checks the payer's account: conta (up to 20),
// ispbParticipante (8 of [0-9A-Z]), agencia (up to 4) and a valid CPF or
// CNPJ.
func destinatarioViolations(d *Destinatario) []Violacao {
	bad := []Violacao{{Razao: "O objeto solicrec.destinatario não respeita o schema.", Propriedade: "solicrec.destinatario"}}
	switch {
	case d == nil, d.Conta == "", len(d.Conta) > 20, !ispbRE.MatchString(d.ISPBParticipante), len(d.Agencia) > 4,
		(d.CPF == "") == (d.CNPJ == ""), !validDoc(d.CPF, d.CNPJ):
		return bad
	}
	return nil
}

// postSolicRec asks the payer's PSP to have the payer confirm a CRIADA
// recurrence (journey 1). The answer shows it CRIADA; the PSP sends it to
// the payer's PSP at once, so any later look finds it ENVIADA, then
// RECEBIDA, until the payer answers (/_sim/solicrec/...) or it expires.
func (s *Server) postSolicRec(w http.ResponseWriter, r *http.Request) {
	var req solicRecRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		badJSON(w)
		return
	}
	defer s.lockAuto()()
	now := s.now()
	var v []Violacao
	add := func(prop, why string) { v = append(v, Violacao{Razao: why, Propriedade: prop}) }
	var expires time.Time
	if c := req.Calendario; c == nil || c.DataExpiracaoSolicitacao == nil {
		add("solicrec.calendario", "O objeto solicrec.calendario não respeita o schema.")
	} else if t, err := time.Parse(time.RFC3339, *c.DataExpiracaoSolicitacao); err != nil {
		add("solicrec.calendario.dataExpiracaoSolicitacao", "data e hora inválidas (RFC 3339)")
	} else if !t.After(now) {
		add("solicrec.calendario.dataExpiracaoSolicitacao", "anterior à data de criação da solicitação")
	} else {
		expires = t
	}
	v = append(v, destinatarioViolations(req.Destinatario)...)
	if req.IDRec == nil || !recIDRE.MatchString(*req.IDRec) {
		add("solicrec.idRec", "não respeita o schema")
	}
	if len(v) > 0 {
		solicInvalid(w, "A solicitação de confirmação de recorrência não respeita o schema.", v...)
		return
	}
	rec, ok := s.auto.recs[*req.IDRec]
	if !ok {
		problem(w, http.StatusNotFound, ProblemRecNotFound, "Recorrência não encontrada.", "recorrência não encontrada para o idRec informado")
		return
	}
	if rec.cur.Status != RecCriada {
		solicInvalid(w, "A recorrência não aguarda confirmação.",
			Violacao{Razao: "a recorrência não está CRIADA", Propriedade: "solicrec.idRec"})
		return
	}
	if slices.ContainsFunc(rec.solics, func(id string) bool { return solicOpen(s.auto.solics[id].cur.Status) }) {
		solicInvalid(w, "Existe uma solicitação ativa referente ao mesmo solicrec.idRec.",
			Violacao{Razao: "Existe uma solicitação ativa referente ao mesmo solicrec.idRec.", Propriedade: "solicrec.idRec"})
		return
	}
	sr := &solicRecord{at: now, expires: expires}
	c := &sr.cur
	c.IDSolicRec, c.IDRec, c.Destinatario = s.newSolicRecID(today(now)), rec.cur.IDRec, *req.Destinatario
	c.Calendario.DataExpiracaoSolicitacao = *req.Calendario.DataExpiracaoSolicitacao
	c.Status, c.Atualizacao = SolicRecCriada, history(nil, SolicRecCriada, now)
	s.auto.solics[c.IDSolicRec] = sr
	rec.solics = append(rec.solics, c.IDSolicRec)
	writeJSON(w, http.StatusCreated, s.solicViewLocked(sr))
	s.setSolicStatusLocked(sr, SolicRecEnviada)
	s.setSolicStatusLocked(sr, SolicRecRecebida)
}

// findSolicLocked is the request's {idSolicRec}, or nil after answering 404.
func (s *Server) findSolicLocked(w http.ResponseWriter, r *http.Request) *solicRecord {
	sr, ok := s.auto.solics[r.PathValue("idSolicRec")]
	if !ok {
		problem(w, http.StatusNotFound, ProblemSolicRecNotFound, "Solicitação não encontrada.",
			"solicitação de recorrência não encontrada para o idSolicRec informado")
		return nil
	}
	return sr
}

func (s *Server) getSolicRec(w http.ResponseWriter, r *http.Request) {
	defer s.lockAuto()()
	if sr := s.findSolicLocked(w, r); sr != nil {
		writeJSON(w, http.StatusOK, s.solicViewLocked(sr))
	}
}

// patchSolicRec cancels a request the payer has not answered (CRIADA,
// ENVIADA or RECEBIDA); the recurrence stays CRIADA. API Pix answers 201.
func (s *Server) patchSolicRec(w http.ResponseWriter, r *http.Request) {
	var req solicRecRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		badJSON(w)
		return
	}
	defer s.lockAuto()()
	sr := s.findSolicLocked(w, r)
	switch {
	case sr == nil:
	case req.Status == nil || *req.Status != SolicRecCancelada || req.IDRec != nil || req.Calendario != nil || req.Destinatario != nil:
		solicInvalid(w, "A revisão da solicitação só aceita status CANCELADA.",
			Violacao{Razao: "status só aceita CANCELADA", Propriedade: "solicrec.status"})
	case !solicOpen(sr.cur.Status):
		solicInvalid(w, "Não é possível cancelar uma solicitação de recorrência com o status diferente de CRIADA, ENVIADA ou RECEBIDA.",
			Violacao{Razao: "solicitação " + sr.cur.Status, Propriedade: "solicrec.status"})
	default:
		s.setSolicStatusLocked(sr, SolicRecCancelada)
		writeJSON(w, http.StatusCreated, s.solicViewLocked(sr))
	}
}

// setSolicStatusLocked moves a request for confirmation to status.
func (s *Server) setSolicStatusLocked(sr *solicRecord, status string) {
	sr.cur.Status = status
	sr.cur.Atualizacao = history(sr.cur.Atualizacao, status, s.now())
}

// solicViewLocked is a copy of the request as answered, with the payload
// the payer's PSP received.
func (s *Server) solicViewLocked(sr *solicRecord) SolicRec {
	out := sr.cur
	out.Atualizacao = slices.Clone(sr.cur.Atualizacao)
	if rec := s.auto.recs[sr.cur.IDRec]; rec != nil {
		p := s.recPayloadLocked(rec)
		out.RecPayload = &p
	}
	return out
}

// expireSolicLocked ends an unanswered request as EXPIRADA; its recurrence,
// if still CRIADA, expires with it.
func (s *Server) expireSolicLocked(sr *solicRecord) {
	s.setSolicStatusLocked(sr, SolicRecExpirada)
	if rec := s.auto.recs[sr.cur.IDRec]; rec != nil && rec.cur.Status == RecCriada {
		s.setRecStatusLocked(rec, RecExpirada)
	}
}

// SolicRecByID returns a request for confirmation as GET
// /solicrec/{idSolicRec} answers it, for tests.
func (s *Server) SolicRecByID(id string) (SolicRec, bool) {
	defer s.lockAuto()()
	sr, ok := s.auto.solics[id]
	if !ok {
		return SolicRec{}, false
	}
	return s.solicViewLocked(sr), true
}
