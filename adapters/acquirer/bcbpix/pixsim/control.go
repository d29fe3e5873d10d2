package pixsim

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

// PayRequest pays a cob as the payer's bank would.
type PayRequest struct {
	TxID string `json:"txid"`
	// Amount in centavos; 0 pays the cob's original amount.
	Amount int64 `json:"amount"`
	// PayerTaxID is the payer's CPF or CNPJ (what GET /pix?cpf= matches).
	PayerTaxID string `json:"payer_document"`
	PayerName  string `json:"payer_name"`
	// Disclose adds the payer ("pagador") to the Pix, a PSP-specific
	// extension; without it the document is never shown.
	Disclose bool `json:"disclose"`
	// Date is the payer's day (YYYY-MM-DD) for a due-date charge (cobv):
	// Amount 0 pays the amount due that day, and the Pix is made at noon
	// of that day in Brasília. Empty: today, now.
	Date string `json:"date"`
}

// ErrNotPayable: the cob does not exist or is not ATIVA.
var ErrNotPayable = errors.New("pixsim: cob not payable")

// Pay settles a cob and sends the callback (unless dropped) before it
// returns. It returns the Pix as GET /pix/{e2eid} shows it.
func (s *Server) Pay(ctx context.Context, req PayRequest) (Pix, error) {
	s.mu.Lock()
	c, amountDue, err := s.payableLocked(req)
	if err != nil {
		s.mu.Unlock()
		return Pix{}, err
	}
	amount := req.Amount
	if amount == 0 {
		amount = amountDue
	}
	now := s.now()
	if !c.at.IsZero() {
		now = c.at
	}
	e2e, err := domain.NewEndToEndID(s.cfg.ISPB, now, rand.Reader)
	if err != nil {
		s.mu.Unlock()
		return Pix{}, err
	}
	payer := Person{Nome: req.PayerName}
	if doc := domain.NormalizeTaxID(req.PayerTaxID); len(doc) == 14 {
		payer.CNPJ = doc
	} else {
		payer.CPF = doc
	}
	p := &Pix{EndToEndID: e2e, TxID: req.TxID, Valor: domain.FormatDecimal(amount), Chave: c.chave, Horario: stamp(now),
		payer: payer, amount: amount, at: now}
	if req.Disclose && payer.doc() != "" {
		pp := payer
		p.Pagador = &pp
	}
	*c.status = CobConcluded
	*c.pix = append(*c.pix, p)
	s.pix[e2e] = p
	s.pixOrder = append(s.pixOrder, e2e)
	out := copyPix(p)
	hook, mode := s.webhooks[c.chave].URL, s.cbMode
	s.mu.Unlock()
	if hook != "" {
		s.callback(ctx, hook, mode, CausePix, []string{out.EndToEndID}, []Pix{out})
	}
	return out, nil
}

// payable is the parts of a cob or cobv a payment changes.
type payable struct {
	chave  string
	status *string
	pix    *[]*Pix
	at     time.Time // when the Pix is made, if not now
}

// payableLocked finds the ATIVA cob or cobv req pays and the amount due:
// a cob's original amount, or a cobv's amount due on req's day.
func (s *Server) payableLocked(req PayRequest) (payable, int64, error) {
	if rec, ok := s.cobs[req.TxID]; ok {
		s.expireLocked(rec)
		if rec.cur.Status != CobActive {
			return payable{}, 0, ErrNotPayable
		}
		amount, _ := domain.ParseDecimal(rec.cur.Valor.Original)
		return payable{chave: rec.cur.Chave, status: &rec.cur.Status, pix: &rec.cur.Pix}, amount, nil
	}
	rec, ok := s.cobvs[req.TxID]
	if !ok {
		return payable{}, 0, ErrNotPayable
	}
	day, at := today(s.now()), time.Time{}
	if req.Date != "" {
		var err error
		if day, err = bizdays.ParseDate(req.Date); err != nil {
			return payable{}, 0, err
		}
		at = time.Date(day.Year(), day.Month(), day.Day(), 12, 0, 0, 0, brasilia)
	}
	amount, err := s.amountDueLocked(rec, day)
	if err != nil {
		return payable{}, 0, err
	}
	return payable{chave: rec.cur.Chave, status: &rec.cur.Status, pix: &rec.cur.Pix, at: at}, amount, nil
}

// NotifyReturns sends, before it returns, a callback for the Pix with its
// devoluções as they stand (settling those due). The PSP already calls
// the webhook by itself when a devolução ends; this repeats it, as a PSP
// retrying a callback would.
func (s *Server) NotifyReturns(ctx context.Context, e2eid string) error {
	s.mu.Lock()
	p, ok := s.pix[e2eid]
	if !ok {
		s.mu.Unlock()
		return ErrNotPayable
	}
	if s.settleLocked(p, false) {
		s.notifyLocked(p, CauseDevolucao)
	}
	out := copyPix(p)
	hook, mode := s.webhooks[p.Chave].URL, s.cbMode
	s.mu.Unlock()
	if hook != "" && out.TxID != "" {
		s.callback(ctx, hook, mode, CauseDevolucao, []string{out.EndToEndID}, []Pix{out})
	}
	return nil
}

func (s *Server) ctlPay(w http.ResponseWriter, r *http.Request) {
	var req PayRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		problem(w, http.StatusBadRequest, ProblemRequestInvalid, "Requisição inválida.", err.Error())
		return
	}
	p, err := s.Pay(r.Context(), req)
	if err != nil {
		problem(w, http.StatusBadRequest, ProblemCobInvalid, "Cobrança não pagável.", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (s *Server) ctlCallbacks(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Mode string `json:"mode"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil ||
		(req.Mode != CallbacksNormal && req.Mode != CallbacksDrop && req.Mode != CallbacksDuplicate) {
		problem(w, http.StatusBadRequest, ProblemRequestInvalid, "Requisição inválida.", "mode: normal, drop or duplicate")
		return
	}
	s.SetCallbacks(req.Mode)
	writeJSON(w, http.StatusOK, map[string]string{"mode": req.Mode})
}

func (s *Server) ctlDown(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Down bool `json:"down"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		problem(w, http.StatusBadRequest, ProblemRequestInvalid, "Requisição inválida.", err.Error())
		return
	}
	s.SetDown(req.Down)
	writeJSON(w, http.StatusOK, map[string]bool{"down": req.Down})
}

// ctlReturns: {"fail_next":true} makes the next devolução end NAO_REALIZADO;
// with "count":n, the next n; {"fail_next":false} lets them succeed again.
func (s *Server) ctlReturns(w http.ResponseWriter, r *http.Request) {
	var req struct {
		FailNext bool `json:"fail_next"`
		Count    *int `json:"count"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || (req.Count != nil && *req.Count < 0) {
		problem(w, http.StatusBadRequest, ProblemRequestInvalid, "Requisição inválida.", "fail_next (boolean) and count (≥ 0)")
		return
	}
	n := 0
	if req.FailNext {
		n = 1
		if req.Count != nil {
			n = *req.Count
		}
	}
	s.FailNextReturns(n)
	writeJSON(w, http.StatusOK, map[string]any{"fail_next": n > 0, "count": n})
}

// MEDRequest is a return the payer's PSP makes under the MED (Mecanismo
// Especial de Devolução): the receiver's account is debited without the
// receiver asking.
type MEDRequest struct {
	EndToEndID string `json:"endToEndId"`
	// Amount in centavos; 0 takes what the Pix has left after its other
	// devoluções.
	Amount int64 `json:"amount"`
	// Natureza is MED_FRAUDE (the default), MED_OPERACIONAL or
	// MED_PIX_AUTOMATICO.
	Natureza string `json:"natureza"`
}

// ErrMEDInvalid: the Pix does not exist, the nature is not a MED one, or
// the amount exceeds what the Pix has left.
var ErrMEDInvalid = errors.New("pixsim: MED return not possible")

// MED makes a MED return of a received Pix: a devolução of the PSP's own
// id, already DEVOLVIDO, and sends the callback (unless dropped) before it
// returns. It returns the devolução.
func (s *Server) MED(ctx context.Context, req MEDRequest) (Devolucao, error) {
	if req.Natureza == "" {
		req.Natureza = "MED_FRAUDE"
	}
	switch req.Natureza {
	case "MED_FRAUDE", "MED_OPERACIONAL", "MED_PIX_AUTOMATICO":
	default:
		return Devolucao{}, ErrMEDInvalid
	}
	s.mu.Lock()
	p, ok := s.pix[req.EndToEndID]
	if !ok {
		s.mu.Unlock()
		return Devolucao{}, ErrMEDInvalid
	}
	var taken int64
	for _, d := range p.Devolucoes {
		if d.Status != ReturnFailed {
			taken += d.amount
		}
	}
	amount := req.Amount
	if amount == 0 {
		amount = p.amount - taken
	}
	if amount <= 0 || taken+amount > p.amount {
		s.mu.Unlock()
		return Devolucao{}, ErrMEDInvalid
	}
	now := s.now()
	rtr, err := domain.NewEndToEndID(s.cfg.ISPB, now, rand.Reader)
	if err != nil {
		s.mu.Unlock()
		return Devolucao{}, err
	}
	d := &Devolucao{ID: "MED" + rtr[1:], RtrID: "D" + rtr[1:], Valor: domain.FormatDecimal(amount), Natureza: req.Natureza,
		Status: ReturnDone, amount: amount, at: now}
	d.Horario.Solicitacao, d.Horario.Liquidacao = stamp(now), stamp(now)
	p.Devolucoes = append(p.Devolucoes, d)
	out, pix := *d, copyPix(p)
	hook, mode := s.webhooks[p.Chave].URL, s.cbMode
	s.mu.Unlock()
	if hook != "" && pix.TxID != "" {
		s.callback(ctx, hook, mode, CauseDevolucao, []string{pix.EndToEndID}, []Pix{pix})
	}
	return out, nil
}

// ctlMED: {"endToEndId", "amount"?, "natureza"?} makes a MED return (MED).
func (s *Server) ctlMED(w http.ResponseWriter, r *http.Request) {
	var req MEDRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		problem(w, http.StatusBadRequest, ProblemRequestInvalid, "Requisição inválida.", err.Error())
		return
	}
	d, err := s.MED(r.Context(), req)
	if err != nil {
		problem(w, http.StatusBadRequest, ProblemRequestInvalid, "Devolução MED não possível.", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, d)
}
