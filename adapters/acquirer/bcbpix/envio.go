package bcbpix

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// PixSendEfi names Efí's Pix-send API (AccountConfig.PixSend): API Pix has
// no standard Pix out, so each PSP has its own; this adapter speaks Efí's
// (docs/bcbpix.md, "Pix out").
const PixSendEfi = "efi"

// Pix-send statuses of Efí's API.
const (
	SendProcessing = "EM_PROCESSAMENTO"
	SendDone       = "REALIZADO"
	SendFailed     = "NAO_REALIZADO"
)

var _ ports.PixSender = (*Acquirer)(nil)

type envioRequest struct {
	Valor   string `json:"valor"`
	Pagador struct {
		Chave       string `json:"chave"`
		InfoPagador string `json:"infoPagador,omitempty"`
	} `json:"pagador"`
	Favorecido struct {
		Chave string `json:"chave"`
	} `json:"favorecido"`
}

// envioBody is Efí's answer to the send (e2eId) and to its query
// (endToEndId).
type envioBody struct {
	IDEnvio    string `json:"idEnvio"`
	E2EID      string `json:"e2eId"`
	EndToEndID string `json:"endToEndId"`
	Valor      string `json:"valor"`
	Status     string `json:"status"`
}

func (b envioBody) result() ports.PixSendResult {
	e2e := b.EndToEndID
	if e2e == "" {
		e2e = b.E2EID
	}
	switch b.Status {
	case SendDone:
		return ports.PixSendResult{Status: domain.PayoutPaid, EndToEndID: e2e}
	case SendFailed:
		return ports.PixSendResult{Status: domain.PayoutFailed, EndToEndID: e2e, FailureCode: "rejected_by_psp"}
	}
	return ports.PixSendResult{Status: domain.PayoutProcessing, EndToEndID: e2e}
}

// sender is the account's client when its PSP sends Pix.
func (a *Acquirer) sender(ctx context.Context, accountID string) (*client, error) {
	c, err := a.client(ctx, accountID)
	if err != nil {
		return nil, err
	}
	if c.cfg.PixSend != PixSendEfi {
		return nil, fmt.Errorf("%w: the account's PSP has no Pix-send API configured (pix_send)", ports.ErrAcquirerNotConfigured)
	}
	return c, nil
}

// SendPix implements ports.PixSender with Efí's PUT /gn/pix/{idEnvio}:
// the send id is the idEnvio, so a repeat is the same Pix. Any refusal of
// the PUT is checked against the send's status first: a PSP that answers
// a repeated idEnvio with an error has still sent the first one. The
// refusal stands (ports.ErrAcquirerRejected) only when the PSP refused the
// request's content and then answers that it has no Pix under the
// idEnvio; when the status cannot be read (credentials, PSP down) or
// contradicts the refusal (409: the idEnvio is used, yet not found),
// nothing is known and the error says so without being a rejection.
func (a *Acquirer) SendPix(ctx context.Context, req ports.PixSendRequest) (ports.PixSendResult, error) {
	c, err := a.sender(ctx, req.AccountID)
	if err != nil {
		return ports.PixSendResult{}, err
	}
	if !domain.ValidTxID(req.SendID) || req.Amount <= 0 {
		return ports.PixSendResult{}, fmt.Errorf("%w: a Pix send needs an idEnvio and an amount", ports.ErrAcquirerRejected)
	}
	var body envioRequest
	body.Valor = domain.FormatDecimal(req.Amount)
	body.Pagador.Chave = c.cfg.PixKey
	body.Pagador.InfoPagador = truncateRunes(req.Description, 140)
	body.Favorecido.Chave = req.Key.Value
	var out envioBody
	err = c.do(ctx, "PUT", "/gn/pix/"+req.SendID, body, &out, true)
	if errors.Is(err, ports.ErrAcquirerRejected) {
		st, serr := a.PixSendStatus(ctx, req.Scope, req.SendID)
		var p *Problem
		switch {
		case serr == nil:
			return st, nil
		case !errors.Is(serr, ports.ErrNotFound):
			if errors.Is(serr, ports.ErrAcquirerRejected) {
				serr = fmt.Errorf("%w: %v", ports.ErrAcquirerUnavailable, serr) // the query's refusal is not the send's
			}
			return ports.PixSendResult{}, fmt.Errorf("the PSP refused the send (%v) and its status is unknown: %w", err, serr)
		case errors.As(err, &p) && p.Status == http.StatusConflict:
			return ports.PixSendResult{}, fmt.Errorf("%w: the PSP says the idEnvio is used but has no Pix under it", ports.ErrAcquirerUnavailable)
		}
	}
	if err != nil {
		return ports.PixSendResult{}, err
	}
	return out.result(), nil
}

// PixSendStatus implements ports.PixSender with Efí's GET
// /gn/pix/enviados/id-envio/{idEnvio}: EM_PROCESSAMENTO → processing,
// REALIZADO → paid, NAO_REALIZADO → failed.
func (a *Acquirer) PixSendStatus(ctx context.Context, scope ports.Scope, sendID string) (ports.PixSendResult, error) {
	c, err := a.sender(ctx, scope.AccountID)
	if err != nil {
		return ports.PixSendResult{}, err
	}
	if !domain.ValidTxID(sendID) {
		return ports.PixSendResult{}, fmt.Errorf("%w: malformed idEnvio", ports.ErrNotFound)
	}
	var out envioBody
	if err := c.do(ctx, "GET", "/gn/pix/enviados/id-envio/"+sendID, nil, &out, true); err != nil {
		return ports.PixSendResult{}, err
	}
	return out.result(), nil
}

// cashoutKey is where a cashout refund goes: its destination key, else the
// payer's document (ports.ErrRefundUnroutable when neither is a Pix key).
func cashoutKey(req ports.RefundRequest) (domain.PixKey, error) {
	raw := cmp.Or(req.DestinationKey, req.PayerTaxID)
	if raw == "" {
		return domain.PixKey{}, fmt.Errorf("%w: no destinationKey and no payer document", ports.ErrRefundUnroutable)
	}
	key, err := domain.ParsePixKey(raw, "")
	if err != nil {
		return domain.PixKey{}, fmt.Errorf("%w: %w", ports.ErrRefundUnroutable, err)
	}
	return key, nil
}

// cashoutRef is the provider reference of a cashout refund.
func cashoutRef(accountID, sendID string) string { return refPrefix + accountID + ":envio:" + sendID }

// cashout sends a refund as a new Pix — to its destination key or else to
// the payer's document as a CPF/CNPJ key — under the idEnvio
// domain.RefundSendID derives from the refund (a retry is the same Pix).
// With neither a valid key nor a payer document it is unroutable.
func (a *Acquirer) cashout(ctx context.Context, req ports.RefundRequest) (string, error) {
	key, err := cashoutKey(req)
	if err != nil {
		return "", err
	}
	sendID := domain.RefundSendID(req.AccountID, req.RefundID)
	if _, err := a.SendPix(ctx, ports.PixSendRequest{Scope: req.Scope, SendID: sendID, Amount: req.Amount, Key: key,
		Description: "devolução"}); err != nil {
		return "", err
	}
	return cashoutRef(req.AccountID, sendID), nil
}

// SupportsCashout implements ports.CashoutSupport: refunds go out as a new
// Pix only for accounts whose PSP has a Pix-send API configured.
func (a *Acquirer) SupportsCashout(scope ports.Scope) bool {
	c, err := a.client(context.Background(), scope.AccountID)
	return err == nil && c.cfg.PixSend == PixSendEfi
}
