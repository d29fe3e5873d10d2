package pixsim

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"time"

	"github.com/quitapix/quita/domain"
)

// Pix-send statuses (Efí's "envio de Pix", an extension of API Pix).
const (
	SendProcessing = "EM_PROCESSAMENTO"
	SendDone       = "REALIZADO"
	SendFailed     = "NAO_REALIZADO"
)

// ProblemSendInvalid is pixsim's problem type for a refused Pix send.
const ProblemSendInvalid = problemBase + "EnvioPixInvalido"

// CauseEnvio marks a callback about a sent Pix that reached REALIZADO or
// NAO_REALIZADO.
const CauseEnvio = "envio"

// Envio is a Pix the PSP was asked to send to a key: PUT
// /gn/pix/{idEnvio} answers it, GET /gn/pix/enviados/id-envio/{idEnvio}
// reads it.
type Envio struct {
	IDEnvio     string `json:"idEnvio"`
	EndToEndID  string `json:"endToEndId"`
	E2EID       string `json:"e2eId"`
	Valor       string `json:"valor"`
	Chave       string `json:"chave"`
	Status      string `json:"status"`
	InfoPagador string `json:"infoPagador,omitempty"`
	Horario     struct {
		Solicitacao string `json:"solicitacao"`
		Liquidacao  string `json:"liquidacao,omitempty"`
	} `json:"horario"`
	Favorecido struct {
		Chave string `json:"chave"`
	} `json:"favorecido"`
	// GnExtras carries the send id in callbacks, as Efí does, so the
	// receiver can tell a sent Pix from a received one.
	GnExtras *EnvioExtras `json:"gnExtras,omitempty"`

	at time.Time
}

// EnvioExtras is the gnExtras block of a sent Pix.
type EnvioExtras struct {
	IDEnvio string `json:"idEnvio"`
	Erro    string `json:"erro,omitempty"`
}

type envioRequest struct {
	Valor   string `json:"valor"`
	Pagador struct {
		Chave       string `json:"chave"`
		InfoPagador string `json:"infoPagador"`
	} `json:"pagador"`
	Favorecido struct {
		Chave string `json:"chave"`
	} `json:"favorecido"`
}

// putEnvio sends a Pix once per idEnvio: the same request again answers
// the Pix already sent (200), a different one under the same id is 409.
// The Pix settles after SendDelay (REALIZADO, or NAO_REALIZADO for a key
// RejectKey named) and the payer key's webhook is called.
func (s *Server) putEnvio(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("idEnvio")
	var req envioRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		badJSON(w)
		return
	}
	invalid := func(detail string, v ...Violacao) {
		problem(w, http.StatusBadRequest, ProblemSendInvalid, "Envio de Pix inválido.", detail, v...)
	}
	amount, err := domain.ParseDecimal(req.Valor)
	switch {
	case !returnIDRE.MatchString(id):
		invalid("idEnvio inválido", Violacao{Razao: "idEnvio não respeita o schema", Propriedade: "idEnvio"})
		return
	case err != nil || amount <= 0:
		invalid("valor inválido", Violacao{Razao: "valor não respeita o schema", Propriedade: "valor"})
		return
	case req.Pagador.Chave == "":
		invalid("chave do pagador ausente", Violacao{Razao: "campo obrigatório", Propriedade: "pagador.chave"})
		return
	case req.Favorecido.Chave == "":
		invalid("chave do favorecido ausente", Violacao{Razao: "campo obrigatório", Propriedade: "favorecido.chave"})
		return
	case len([]rune(req.Pagador.InfoPagador)) > 140:
		invalid("infoPagador longo demais", Violacao{Razao: "máximo de 140 caracteres", Propriedade: "pagador.infoPagador"})
		return
	}
	now := s.now()
	s.mu.Lock()
	if e, ok := s.envios[id]; ok {
		same := e.Valor == domain.FormatDecimal(amount) && e.Favorecido.Chave == req.Favorecido.Chave && e.Chave == req.Pagador.Chave
		out := *e
		s.mu.Unlock()
		if !same {
			problem(w, http.StatusConflict, ProblemSendInvalid, "idEnvio já utilizado.", "outro envio usou este idEnvio")
			return
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	e2e, err := domain.NewEndToEndID(s.cfg.ISPB, now, rand.Reader)
	if err != nil {
		s.mu.Unlock()
		problem(w, http.StatusInternalServerError, ProblemInternal, "Erro interno.", "")
		return
	}
	e := &Envio{IDEnvio: id, EndToEndID: e2e, E2EID: e2e, Valor: domain.FormatDecimal(amount), Chave: req.Pagador.Chave,
		Status: SendProcessing, InfoPagador: req.Pagador.InfoPagador, at: now}
	e.Horario.Solicitacao = stamp(now)
	e.Favorecido.Chave = req.Favorecido.Chave
	s.envios[id] = e
	s.envioOrder = append(s.envioOrder, id)
	out := *e
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, out)
	s.settleEnvioLater(id)
}

// settleEnvioLater settles the send after SendDelay and calls the webhook.
func (s *Server) settleEnvioLater(id string) {
	s.later(s.cfg.SendDelay, func() {
		if e, ok := s.envios[id]; ok && s.settleEnvioLocked(e, true) {
			s.notifyEnvioLocked(e)
		}
	})
}

// settleEnvioLocked ends a send still EM_PROCESSAMENTO (when force, or
// once SendDelay has passed); true when it changed.
func (s *Server) settleEnvioLocked(e *Envio, force bool) bool {
	now := s.now()
	if e.Status != SendProcessing || (!force && now.Before(e.at.Add(s.cfg.SendDelay))) {
		return false
	}
	if s.rejected[e.Favorecido.Chave] {
		e.Status = SendFailed
		return true
	}
	e.Status = SendDone
	e.Horario.Liquidacao = stamp(now)
	return true
}

// notifyEnvioLocked posts the send's final state to the webhook of the
// payer key, with gnExtras.idEnvio naming it.
func (s *Server) notifyEnvioLocked(e *Envio) {
	hook := s.webhooks[e.Chave].URL
	if hook == "" {
		return
	}
	out, mode := *e, s.cbMode
	out.GnExtras = &EnvioExtras{IDEnvio: e.IDEnvio}
	if e.Status == SendFailed {
		out.GnExtras.Erro = "chave do favorecido recusada"
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		s.callback(context.Background(), hook, mode, CauseEnvio, []string{out.EndToEndID}, []Envio{out})
	}()
}

func (s *Server) getEnvio(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.envios[r.PathValue("idEnvio")]
	if !ok {
		problem(w, http.StatusNotFound, ProblemPixNotFound, "Pix enviado não encontrado.", "")
		return
	}
	if s.settleEnvioLocked(e, false) {
		s.notifyEnvioLocked(e)
	}
	writeJSON(w, http.StatusOK, *e)
}

// RejectKey makes every Pix sent to chave end NAO_REALIZADO, as a payee's
// PSP refusing it would.
func (s *Server) RejectKey(chave string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rejected[chave] = true
}

// Envios lists the Pix the PSP was asked to send, oldest first: one per
// idEnvio however often it was asked.
func (s *Server) Envios() []Envio {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Envio, 0, len(s.envioOrder))
	for _, id := range s.envioOrder {
		out = append(out, *s.envios[id])
	}
	return out
}
