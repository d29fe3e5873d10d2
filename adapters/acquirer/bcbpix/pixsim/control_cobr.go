package pixsim

import (
	"context"
	"errors"
	"fmt"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

// ErrCobRNotFound: no recurring charge has that txid.
var ErrCobRNotFound = errors.New("pixsim: recurring charge not found")

// ErrCobRState: the recurring charge (or its pending attempt) is not in a
// status that allows the step.
var ErrCobRState = errors.New("pixsim: the recurring charge cannot take this step in its status")

// CobRAction is a step of the payer's PSP on a recurring charge's pending
// attempt: debit it (DebitCobR), fail it (FailCobR), or the payer
// cancelling the scheduled payment (CancelCobRByPayer).
type CobRAction struct {
	TxID string `json:"txid"`
	// Codigo: for a failure, a rejection code (the attempt ends REJEITADA,
	// and the charge too when the code is one of AC05, AM09, DENC, DS27,
	// DTED, MIDI, MSUC, NITX, RC09); empty, the attempt ends EXPIRADA
	// (not settled that day). For a cancellation, a cancellation code
	// (default SLBD).
	Codigo    string `json:"codigo"`
	Descricao string `json:"descricao"`
	// Intraday: after a failed first attempt (AGND), the payer's PSP
	// schedules its same-day retry (RIFL).
	Intraday bool `json:"intraday"`
}

var cobrCancelCodes = []string{"ACCT", "BLCK", "CCLD", "FAIL", "OTHR", "SLBD", "SLCR"}

// pendingLocked is the recurring charge txid names and its AGENDADA attempt.
func (s *Server) pendingLocked(txid string) (*cobrRecord, *Tentativa, error) {
	c, ok := s.auto.cobrs[txid]
	if !ok {
		return nil, nil, fmt.Errorf("%w: txid %s", ErrCobRNotFound, txid)
	}
	t := openTentativa(c)
	if t == nil || t.Status != TentativaAgendada || c.cur.Status != CobRAtiva {
		return nil, nil, fmt.Errorf("%w: %s, no attempt AGENDADA", ErrCobRState, c.cur.Status)
	}
	return c, t, nil
}

// DebitCobR is the payer's PSP settling a recurring charge's scheduled
// attempt, whatever today's date: the Pix takes the attempt's end-to-end
// id (GET /pix lists it, with the charge's txid), the attempt is PAGA and
// the charge CONCLUIDA with the Pix; the webhookcobr callback is sent
// before it returns.
func (s *Server) DebitCobR(ctx context.Context, a CobRAction) (Pix, error) {
	var out Pix
	err := s.step(ctx, func() error {
		c, t, err := s.pendingLocked(a.TxID)
		if err != nil {
			return err
		}
		amount, _ := domain.ParseDecimal(c.cur.Valor.Original)
		now := s.now()
		p := &Pix{EndToEndID: t.EndToEndID, TxID: c.cur.TxID, Valor: c.cur.Valor.Original, Horario: stamp(now), amount: amount, at: now}
		if payer := s.auto.recs[c.cur.IDRec].cur.Pagador; payer != nil {
			p.payer = Person{CPF: payer.CPF, CNPJ: payer.CNPJ}
		}
		s.pix[p.EndToEndID] = p
		s.pixOrder = append(s.pixOrder, p.EndToEndID)
		c.cur.Pix = append(c.cur.Pix, p)
		s.setTentativaLocked(t, TentativaPaga)
		s.setCobRStatusLocked(c, CobRConcluida)
		s.notifyCobRLocked(c)
		out = copyPix(p)
		return nil
	})
	return out, err
}

// FailCobR is the payer's PSP failing a recurring charge's pending attempt
// (see CobRAction). The charge stays ATIVA while the receiver may still
// ask for a new attempt (PERMITE_3R_7D); otherwise it ends EXPIRADA.
func (s *Server) FailCobR(ctx context.Context, a CobRAction) (CobR, error) {
	if a.Codigo != "" {
		if _, err := codeOr(a.Codigo, "", rejectionCodes); err != nil {
			return CobR{}, err
		}
	}
	var out CobR
	err := s.step(ctx, func() error {
		c, ok := s.auto.cobrs[a.TxID]
		if !ok {
			return fmt.Errorf("%w: txid %s", ErrCobRNotFound, a.TxID)
		}
		t := openTentativa(c)
		if t == nil || cobrEnded(c.cur.Status) {
			return fmt.Errorf("%w: %s, no attempt pending", ErrCobRState, c.cur.Status)
		}
		if a.Codigo != "" {
			why := a.Descricao
			if why == "" {
				why = "tentativa rejeitada pelo PSP pagador"
			}
			s.rejectTentativaLocked(c, t, Rejeicao{Codigo: a.Codigo, Descricao: why})
		} else {
			s.setTentativaLocked(t, TentativaExpirada)
		}
		if a.Intraday && t.Tipo == TentativaAgendamento && !cobrEnded(c.cur.Status) {
			day, _ := bizdays.ParseDate(t.DataLiquidacao)
			s.setTentativaLocked(s.addTentativaLocked(c, TentativaIntradia, day), TentativaAgendada)
		}
		s.notifyCobRLocked(c)
		s.expireCobRLocked(c)
		out = cobrView(c)
		return nil
	})
	return out, err
}

// CancelCobRByPayer is the payer cancelling a scheduled recurring charge,
// up to the day before its first attempt's settlement date: it ends
// CANCELADA with encerramento.cancelamento USUARIO_PAGADOR.
func (s *Server) CancelCobRByPayer(ctx context.Context, a CobRAction) (CobR, error) {
	code, err := codeOr(a.Codigo, cobrCancelByPayer, cobrCancelCodes)
	if err != nil {
		return CobR{}, err
	}
	var out CobR
	err = s.step(ctx, func() error {
		c, ok := s.auto.cobrs[a.TxID]
		if !ok {
			return fmt.Errorf("%w: txid %s", ErrCobRNotFound, a.TxID)
		}
		if why := s.cancellableLocked(c); why != "" {
			return fmt.Errorf("%w: %s", ErrCobRState, why)
		}
		s.cancelCobRLocked(c, UsuarioPagador, code, "Cancelamento do agendamento solicitado pelo usuário pagador")
		out = cobrView(c)
		return nil
	})
	return out, err
}
