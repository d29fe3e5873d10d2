package pixsim

// The payer's side of Pix Automático, which API Pix does not expose: the
// payer (through its PSP) answers a request for confirmation, approves or
// refuses a recurrence read from a QR code, revokes an approved one, and
// its PSP settles or fails the attempts of recurring charges
// (control_cobr.go). Each step is a Go method and a POST /_sim/... endpoint
// taking the same JSON; the callbacks it causes are sent before it
// returns.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/quitapix/quita/domain"
)

// Errors of the payer's side.
var (
	// ErrRecNotFound: no recurrence or request for confirmation has that id.
	ErrRecNotFound = errors.New("pixsim: recurrence not found")
	// ErrRecState: the recurrence (or its request) is not in a status
	// that allows the step.
	ErrRecState = errors.New("pixsim: the recurrence cannot take this step in its status")
	// ErrCode: the code is not one the specification lists for the step.
	ErrCode = errors.New("pixsim: code not listed by API Pix for this step")
)

// SolicRecAnswer is the payer's answer to a request for confirmation
// (journey 1).
type SolicRecAnswer struct {
	IDSolicRec string `json:"idSolicRec"`
	// Codigo is a refusal's reason: AP13 or AP14 (the default).
	Codigo string `json:"codigo"`
	// CodMun is the payer's municipality (IBGE code), for an acceptance.
	CodMun string `json:"codMun"`
}

// RecApproval is the payer approving a recurrence read from its QR code.
// A recurrence whose ativacao.dadosJornada names a cob is journey 3: the
// payer pays that cob and approves in one step. TxID naming a cobv is
// journey 4: the payer pays the cobv (today's amount) and opts in.
// Otherwise it is journey 2.
type RecApproval struct {
	IDRec string `json:"idRec"`
	TxID  string `json:"txid"`
	// PayerTaxID is the payer's CPF or CNPJ (default: the debtor's).
	PayerTaxID string `json:"payer_document"`
	PayerName  string `json:"payer_name"`
	// ISPB is the payer's PSP (default 99999997).
	ISPB   string `json:"ispb"`
	CodMun string `json:"codMun"`
}

// RecAction is the payer refusing (RejectRec), revoking (CancelRecByPayer)
// or letting expire (ExpireRec) a recurrence.
type RecAction struct {
	IDRec string `json:"idRec"`
	// Codigo: for a refusal AP13 or AP14 (default); for a revocation one
	// of the cancellation codes (default SLDB).
	Codigo string `json:"codigo"`
	// Solicitante of a revocation: USUARIO_PAGADOR (default) or PSP_PAGADOR.
	Solicitante string `json:"solicitante"`
}

var (
	recRejectionCodes = []string{"AP13", "AP14"}
	recCancelCodes    = []string{"ACCL", "CPCL", "DCSD", "ERSL", "FRUD", "PCFD", "SLCR", "SLDB"}
)

// step runs a step of the payer under the lock and posts the callbacks it
// queued before returning.
func (s *Server) step(ctx context.Context, f func() error) error {
	s.mu.Lock()
	s.refreshAutoLocked()
	err := f()
	out := s.takeOutboxLocked()
	s.mu.Unlock()
	s.deliver(ctx, out)
	return err
}

// openSolicLocked is the request for confirmation id names, still awaiting
// the payer, and its CRIADA recurrence.
func (s *Server) openSolicLocked(id string) (*solicRecord, *recRecord, error) {
	sr, ok := s.auto.solics[id]
	if !ok {
		return nil, nil, fmt.Errorf("%w: idSolicRec %s", ErrRecNotFound, id)
	}
	rec := s.auto.recs[sr.cur.IDRec]
	if !solicOpen(sr.cur.Status) || rec.cur.Status != RecCriada {
		return nil, nil, fmt.Errorf("%w: request %s, recurrence %s", ErrRecState, sr.cur.Status, rec.cur.Status)
	}
	return sr, rec, nil
}

// AcceptSolicRec is the payer accepting a request for confirmation: the
// request ACEITA, the recurrence APROVADA by journey 1, its pagador the
// request's destinatario.
func (s *Server) AcceptSolicRec(ctx context.Context, a SolicRecAnswer) (Rec, error) {
	var out Rec
	err := s.step(ctx, func() error {
		sr, rec, err := s.openSolicLocked(a.IDSolicRec)
		if err != nil {
			return err
		}
		d := sr.cur.Destinatario
		s.setSolicStatusLocked(sr, SolicRecAceita)
		s.approveLocked(rec, Jornada1, RecPagador{ISPBParticipante: d.ISPBParticipante, CPF: d.CPF, CNPJ: d.CNPJ, CodMun: a.CodMun})
		out = s.recViewLocked(rec, true)
		return nil
	})
	return out, err
}

// RejectSolicRec is the payer refusing a request for confirmation: the
// request and the recurrence REJEITADA, with encerramento.rejeicao.
func (s *Server) RejectSolicRec(ctx context.Context, a SolicRecAnswer) (Rec, error) {
	code, err := codeOr(a.Codigo, recRejectByDefault, recRejectionCodes)
	if err != nil {
		return Rec{}, err
	}
	var out Rec
	err = s.step(ctx, func() error {
		sr, rec, err := s.openSolicLocked(a.IDSolicRec)
		if err != nil {
			return err
		}
		s.setSolicStatusLocked(sr, SolicRecRejeitada)
		s.rejectRecLocked(rec, code)
		out = s.recViewLocked(rec, true)
		return nil
	})
	return out, err
}

// ExpireSolicRec lets a request for confirmation expire unanswered, as
// when dataExpiracaoSolicitacao passes: it and its recurrence EXPIRADA.
func (s *Server) ExpireSolicRec(ctx context.Context, a SolicRecAnswer) (Rec, error) {
	var out Rec
	err := s.step(ctx, func() error {
		sr, rec, err := s.openSolicLocked(a.IDSolicRec)
		if err != nil {
			return err
		}
		s.expireSolicLocked(sr)
		out = s.recViewLocked(rec, true)
		return nil
	})
	return out, err
}

// codeOr is code, or def when empty; a code outside allowed is ErrCode.
func codeOr(code, def string, allowed []string) (string, error) {
	if code == "" {
		return def, nil
	}
	if !slices.Contains(allowed, code) {
		return "", fmt.Errorf("%w: %q", ErrCode, code)
	}
	return code, nil
}

func (s *Server) approveLocked(rec *recRecord, journey string, payer RecPagador) {
	rec.cur.Pagador = &payer
	rec.cur.Ativacao.TipoJornada = journey
	if journey != Jornada3 {
		rec.cur.Ativacao.DadosJornada = nil
	}
	s.setRecStatusLocked(rec, RecAprovada)
}

func (s *Server) rejectRecLocked(rec *recRecord, code string) {
	why := map[string]string{"AP13": "Usuário pagador não reconhece o usuário recebedor",
		"AP14": "Usuário pagador não tem interesse na recorrência"}[code]
	rec.cur.Encerramento = &Encerramento{Rejeicao: &Rejeicao{Codigo: code, Descricao: why}}
	s.setRecStatusLocked(rec, RecRejeitada)
}

// qrRecLocked is the CRIADA recurrence a payer read from a QR code: it has
// a location and no request for confirmation awaiting the payer.
func (s *Server) qrRecLocked(idRec string) (*recRecord, error) {
	rec, ok := s.auto.recs[idRec]
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: idRec %s", ErrRecNotFound, idRec)
	case rec.cur.Status != RecCriada:
		return nil, fmt.Errorf("%w: %s", ErrRecState, rec.cur.Status)
	case rec.locID == 0:
		return nil, fmt.Errorf("%w: the recurrence has no location, so no QR code", ErrRecState)
	case slices.ContainsFunc(rec.solics, func(id string) bool { return solicOpen(s.auto.solics[id].cur.Status) }):
		return nil, fmt.Errorf("%w: a request for confirmation awaits the payer", ErrRecState)
	}
	return rec, nil
}

// ApproveRec is the payer approving a recurrence read from its QR code
// (journeys 2, 3 and 4; see RecApproval). A charge it pays goes through
// Pay: its Pix and its callback come first.
func (s *Server) ApproveRec(ctx context.Context, a RecApproval) (Rec, error) {
	s.mu.Lock()
	s.refreshAutoLocked()
	rec, err := s.qrRecLocked(a.IDRec)
	journey, pay := Jornada2, ""
	if err == nil {
		switch d := rec.cur.Ativacao.DadosJornada; {
		case d != nil && (a.TxID == "" || a.TxID == d.TxID):
			journey, pay = Jornada3, d.TxID
		case d != nil:
			err = fmt.Errorf("%w: journey 3 pays the cob %s", ErrRecState, d.TxID)
		case a.TxID != "" && s.cobvs[a.TxID] == nil:
			err = fmt.Errorf("%w: journey 4 needs a cobv, not %q", ErrRecState, a.TxID)
		case a.TxID != "":
			journey, pay = Jornada4, a.TxID
		}
	}
	var payer Person
	if err == nil {
		payer = rec.cur.Vinculo.Devedor
	}
	queued := s.takeOutboxLocked()
	s.mu.Unlock()
	s.deliver(ctx, queued)
	if err != nil {
		return Rec{}, err
	}
	if a.PayerTaxID != "" {
		payer = Person{Nome: a.PayerName}
		if doc := domain.NormalizeTaxID(a.PayerTaxID); len(doc) == 14 {
			payer.CNPJ = doc
		} else {
			payer.CPF = doc
		}
	}
	if pay != "" {
		if _, err := s.Pay(ctx, PayRequest{TxID: pay, PayerTaxID: payer.doc(), PayerName: payer.Nome}); err != nil {
			return Rec{}, err
		}
	}
	ispb := a.ISPB
	if ispb == "" {
		ispb = defaultPayerISPB
	}
	var out Rec
	err = s.step(ctx, func() error {
		rec, err := s.qrRecLocked(a.IDRec)
		if err != nil {
			return err
		}
		s.approveLocked(rec, journey, RecPagador{ISPBParticipante: ispb, CPF: payer.CPF, CNPJ: payer.CNPJ, CodMun: a.CodMun})
		out = s.recViewLocked(rec, true)
		return nil
	})
	return out, err
}

// RejectRec is the payer refusing a recurrence read from its QR code: it
// ends REJEITADA with encerramento.rejeicao.
func (s *Server) RejectRec(ctx context.Context, a RecAction) (Rec, error) {
	code, err := codeOr(a.Codigo, recRejectByDefault, recRejectionCodes)
	if err != nil {
		return Rec{}, err
	}
	var out Rec
	err = s.step(ctx, func() error {
		rec, err := s.qrRecLocked(a.IDRec)
		if err != nil {
			return err
		}
		s.rejectRecLocked(rec, code)
		out = s.recViewLocked(rec, true)
		return nil
	})
	return out, err
}

// CancelRecByPayer is the payer (or its PSP) revoking an approved
// recurrence: it ends CANCELADA with encerramento.cancelamento, and its
// open recurring charges are cancelled with it (SLBD).
func (s *Server) CancelRecByPayer(ctx context.Context, a RecAction) (Rec, error) {
	code, err := codeOr(a.Codigo, recCancelByPayer, recCancelCodes)
	if err != nil {
		return Rec{}, err
	}
	who := a.Solicitante
	switch who {
	case "":
		who = UsuarioPagador
	case UsuarioPagador, PSPPagador:
	default:
		return Rec{}, fmt.Errorf("%w: solicitante %q", ErrCode, who)
	}
	var out Rec
	err = s.step(ctx, func() error {
		rec, ok := s.auto.recs[a.IDRec]
		if !ok {
			return fmt.Errorf("%w: idRec %s", ErrRecNotFound, a.IDRec)
		}
		if rec.cur.Status != RecAprovada {
			return fmt.Errorf("%w: %s", ErrRecState, rec.cur.Status)
		}
		s.cancelRecLocked(rec, who, code, "Cancelamento solicitado pelo usuário pagador")
		out = s.recViewLocked(rec, true)
		return nil
	})
	return out, err
}

// ExpireRec lets a CRIADA recurrence expire without approval; a request
// for confirmation still open expires with it.
func (s *Server) ExpireRec(ctx context.Context, a RecAction) (Rec, error) {
	var out Rec
	err := s.step(ctx, func() error {
		rec, ok := s.auto.recs[a.IDRec]
		if !ok {
			return fmt.Errorf("%w: idRec %s", ErrRecNotFound, a.IDRec)
		}
		if rec.cur.Status != RecCriada {
			return fmt.Errorf("%w: %s", ErrRecState, rec.cur.Status)
		}
		for _, id := range rec.solics {
			if sr := s.auto.solics[id]; solicOpen(sr.cur.Status) {
				s.setSolicStatusLocked(sr, SolicRecExpirada)
			}
		}
		s.setRecStatusLocked(rec, RecExpirada)
		out = s.recViewLocked(rec, true)
		return nil
	})
	return out, err
}

// control adapts a step of the payer to a POST /_sim endpoint: the JSON
// body is its argument, its result the answer; a step refused is 400.
func control[Req, Out any](step func(context.Context, Req) (Out, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req Req
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			problem(w, http.StatusBadRequest, ProblemRequestInvalid, "Requisição inválida.", err.Error())
			return
		}
		out, err := step(r.Context(), req)
		if err != nil {
			problem(w, http.StatusBadRequest, ProblemRequestInvalid, "Passo não realizado.", err.Error())
			return
		}
		writeJSON(w, http.StatusOK, out)
	}
}
