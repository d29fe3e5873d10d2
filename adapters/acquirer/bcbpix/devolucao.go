package bcbpix

import (
	"context"
	"fmt"
	"strings"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

type devolucaoBody struct {
	ID        string `json:"id,omitempty"`
	RtrID     string `json:"rtrId,omitempty"`
	Valor     string `json:"valor"`
	Natureza  string `json:"natureza,omitempty"`
	Descricao string `json:"descricao,omitempty"`
	Status    string `json:"status,omitempty"`
	Motivo    string `json:"motivo,omitempty"`
	Horario   *struct {
		Solicitacao string `json:"solicitacao,omitempty"`
		Liquidacao  string `json:"liquidacao,omitempty"`
	} `json:"horario,omitempty"`
}

// MED natures of a devolução: returns the payer's PSP makes under the
// Mecanismo Especial de Devolução, never asked for by Quita.
const (
	natureMEDFraud       = "MED_FRAUDE"
	natureMEDOperational = "MED_OPERACIONAL"
	natureMEDAutomatico  = "MED_PIX_AUTOMATICO"
)

// disputeReason maps a devolução's nature to a dispute reason; "" for the
// natures of devoluções a receiver asks for (ORIGINAL, RETIRADA).
func disputeReason(natureza string) domain.DisputeReason {
	switch natureza {
	case natureMEDFraud:
		return domain.DisputeFraud
	case natureMEDOperational:
		return domain.DisputeOperational
	case natureMEDAutomatico:
		return domain.DisputePixAutomatico
	}
	if strings.HasPrefix(natureza, "MED_") {
		return domain.DisputeOther
	}
	return ""
}

// devolution is d as a port value, when it is not refused.
func (d devolucaoBody) devolution() (ports.PixDevolution, bool) {
	v, err := domain.ParseDecimal(d.Valor)
	if err != nil || d.Status == ReturnFailed {
		return ports.PixDevolution{}, false
	}
	out := ports.PixDevolution{ID: d.ID, Amount: v, Reason: disputeReason(d.Natureza), Done: d.Status == ReturnDone}
	if h := d.Horario; h != nil {
		for _, at := range []string{h.Liquidacao, h.Solicitacao} {
			if t, ok := pspTime(at); ok {
				out.At = t
				break
			}
		}
	}
	return out, true
}

func (a *Acquirer) devolucao(ctx context.Context, accountID, e2eid, id string, amount int64, reason string) (devolucaoBody, error) {
	var out devolucaoBody
	if !domain.ValidEndToEndID(e2eid) {
		return out, fmt.Errorf("%w: a devolução needs the end-to-end id of the Pix", ports.ErrAcquirerRejected)
	}
	c, err := a.client(ctx, accountID)
	if err != nil {
		return out, err
	}
	body := devolucaoBody{Valor: domain.FormatDecimal(amount), Natureza: "ORIGINAL", Descricao: truncateRunes(reason, 140)}
	err = c.do(ctx, "PUT", "/pix/"+e2eid+"/devolucao/"+id, body, &out, true)
	return out, err
}

// ReturnPix implements ports.Acquirer with PUT /pix/{e2eid}/devolucao/{id}
// (natureza ORIGINAL); the return id is the devolução id, so a retry is the
// same devolução, answered as it stands (NAO_REALIZADO included: a refused
// devolução is asked again under a new id, never the same one).
func (a *Acquirer) ReturnPix(ctx context.Context, req ports.ReturnPixRequest) (*ports.ReturnPixResponse, error) {
	d, err := a.devolucao(ctx, req.AccountID, req.EndToEndID, req.ReturnID, req.Amount, req.Reason)
	if err != nil {
		return nil, err
	}
	return returnAnswer(req.AccountID, req.EndToEndID, req.ReturnID, d), nil
}

// ReturnPixStatus implements ports.Acquirer with GET
// /pix/{e2eid}/devolucao/{id}: EM_PROCESSAMENTO → IN_PROGRESS, DEVOLVIDO →
// RETURNED, NAO_REALIZADO → FAILED (with its motivo). An id the PSP does
// not know is ports.ErrNotFound.
func (a *Acquirer) ReturnPixStatus(ctx context.Context, req ports.ReturnPixStatusRequest) (*ports.ReturnPixResponse, error) {
	if !domain.ValidEndToEndID(req.EndToEndID) || req.ReturnID == "" {
		return nil, fmt.Errorf("%w: a devolução needs the end-to-end id of the Pix and its id", ports.ErrNotFound)
	}
	c, err := a.client(ctx, req.AccountID)
	if err != nil {
		return nil, err
	}
	var d devolucaoBody
	if err := c.do(ctx, "GET", "/pix/"+req.EndToEndID+"/devolucao/"+req.ReturnID, nil, &d, true); err != nil {
		return nil, err
	}
	return returnAnswer(req.AccountID, req.EndToEndID, req.ReturnID, d), nil
}

// returnAnswer is a devolução as ports.ReturnPixResponse.
func returnAnswer(accountID, e2eid, id string, d devolucaoBody) *ports.ReturnPixResponse {
	out := &ports.ReturnPixResponse{ProviderRef: refPrefix + accountID + ":" + e2eid + ":" + id, Status: domain.PixReturnInProgress}
	switch d.Status {
	case ReturnDone:
		out.Status = domain.PixReturnReturned
	case ReturnFailed:
		out.Status, out.Failure = domain.PixReturnFailed, truncateRunes(d.Motivo, 140)
	}
	return out
}

// Refund implements ports.RefundAcquirer: a devolução of the original Pix,
// partial or repeated up to its amount; or, for a cashout with the payer's
// key, a new Pix through the PSP's Pix-send API (not part of API Pix).
func (a *Acquirer) Refund(ctx context.Context, req ports.RefundRequest) (string, error) {
	if req.Strategy == domain.StrategyCashout {
		return a.cashout(ctx, req)
	}
	if req.Method != "" && req.Method != domain.MethodPix {
		return "", fmt.Errorf("%w: the API Pix provider refunds only Pix", ports.ErrAcquirerRejected)
	}
	if _, err := a.devolucao(ctx, req.AccountID, req.EndToEndID, req.RefundID, req.Amount, "devolução solicitada pelo recebedor"); err != nil {
		return "", err
	}
	return refPrefix + req.AccountID + ":" + req.EndToEndID + ":" + req.RefundID, nil
}

// parseRef splits a provider reference into the account and its parts.
func parseRef(ref string, parts int) (string, []string, error) {
	rest, ok := strings.CutPrefix(ref, refPrefix)
	f := strings.Split(rest, ":")
	if !ok || len(f) != parts+1 || f[0] == "" {
		return "", nil, fmt.Errorf("%w: not an API Pix reference", ports.ErrNotFound)
	}
	return f[0], f[1:], nil
}

// RefundStatus implements ports.RefundAcquirer with GET
// /pix/{e2eid}/devolucao/{id}: EM_PROCESSAMENTO → IN_PROGRESS, DEVOLVIDO →
// REFUNDED, NAO_REALIZADO → FAILED.
func (a *Acquirer) RefundStatus(ctx context.Context, providerRef string) (string, error) {
	acct, f, err := parseRef(providerRef, 2)
	if err != nil {
		return "", err
	}
	if f[0] == "envio" {
		st, err := a.PixSendStatus(ctx, ports.Scope{AccountID: acct, Mode: domain.ModeLive}, f[1])
		if err != nil {
			return "", err
		}
		switch st.Status {
		case domain.PayoutPaid:
			return string(domain.RefundRefunded), nil
		case domain.PayoutFailed:
			return string(domain.RefundFailed), nil
		}
		return string(domain.RefundInProgress), nil
	}
	c, err := a.client(ctx, acct)
	if err != nil {
		return "", err
	}
	var out devolucaoBody
	if err := c.do(ctx, "GET", "/pix/"+f[0]+"/devolucao/"+f[1], nil, &out, true); err != nil {
		return "", err
	}
	return RefundState(out.Status), nil
}

// RefundState maps a devolução status to a refund status.
func RefundState(s string) string {
	switch s {
	case ReturnDone:
		return string(domain.RefundRefunded)
	case ReturnFailed:
		return string(domain.RefundFailed)
	default:
		return string(domain.RefundInProgress)
	}
}
