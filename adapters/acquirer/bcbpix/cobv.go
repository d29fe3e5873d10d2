package bcbpix

import (
	"context"
	"errors"
	"fmt"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/cobv"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// cobvBody is a due-date charge as sent and answered (CobVSolicitada,
// CobVCompleta): the terms in the API Pix's own fields, translated by
// package cobv.
type cobvBody struct {
	Calendario         cobv.Calendario `json:"calendario"`
	TxID               string          `json:"txid,omitempty"`
	Status             string          `json:"status,omitempty"`
	Devedor            devedor         `json:"devedor"`
	Valor              cobv.Valor      `json:"valor"`
	Chave              string          `json:"chave"`
	SolicitacaoPagador string          `json:"solicitacaoPagador,omitempty"`
	Location           string          `json:"location,omitempty"`
	PixCopiaECola      string          `json:"pixCopiaECola,omitempty"`
}

// SupportsDueDate reports that the API Pix opens due-date charges (cobv)
// for every account.
func (a *Acquirer) SupportsDueDate(ports.Scope) bool { return true }

// createCobV opens req's due-date charge with PUT /cobv/{txid}: one txid,
// one cobv, so a retry after a lost answer meets its own cobv and takes it
// when its terms are the ones asked for.
//
// A cobv a lote opened (req.OpenedInBatch) is read with GET /cobv/{txid}
// and taken when it is ATIVA with the terms asked for; one the PSP does
// not have is asked for as any other.
func (a *Acquirer) createCobV(ctx context.Context, c *client, req ports.CreatePixChargeRequest) (*ports.CreatePixChargeResponse, error) {
	body, err := newCobVBody(c, req)
	if err != nil {
		return nil, err
	}
	path := "/cobv/" + req.TxID
	var out cobvBody
	if req.OpenedInBatch {
		err = c.do(ctx, "GET", path, nil, &out, true)
		switch {
		case err == nil && out.Status == cobvActive && sameCobV(out, body):
			return a.cobvResponse(req, out)
		case err == nil:
			return nil, fmt.Errorf("%w: the cobv the lote opened is %s or has other terms", ports.ErrAcquirerRejected, out.Status)
		case !errors.Is(err, ports.ErrNotFound):
			return nil, err
		}
	}
	err = c.do(ctx, "PUT", path, body, &out, true)
	if errors.Is(err, ports.ErrAcquirerRejected) {
		var existing cobvBody
		// A retry finds the cobv its first attempt opened: taken only
		// while it can be paid (a removed or concluded one is not this
		// create's to answer).
		if gerr := c.do(ctx, "GET", path, nil, &existing, true); gerr == nil && existing.Status == cobvActive && sameCobV(existing, body) {
			out, err = existing, nil
		}
	}
	if err != nil {
		return nil, err
	}
	if !sameCobV(out, body) {
		return nil, fmt.Errorf("%w: the PSP answered a cobv with other terms or key", ports.ErrAcquirerUnavailable)
	}
	return a.cobvResponse(req, out)
}

// cobvActive is the status of a cobv that can be paid.
const cobvActive = "ATIVA"

// newCobVBody is req's cobv as PUT /cobv/{txid} and PUT /lotecobv/{id}
// send it (CobVSolicitada): the debtor is required.
func newCobVBody(c *client, req ports.CreatePixChargeRequest) (cobvBody, error) {
	doc := domain.NormalizeTaxID(req.DebtorTaxID)
	if req.Due == nil || doc == "" || req.DebtorName == "" {
		return cobvBody{}, fmt.Errorf("%w: a due-date charge needs its terms and its debtor's document and name", ports.ErrAcquirerRejected)
	}
	body := cobvBody{Chave: c.cfg.PixKey, SolicitacaoPagador: truncateRunes(req.Description, 140),
		Devedor: devedor{Nome: truncateRunes(req.DebtorName, 200)}}
	if len(doc) == 14 {
		body.Devedor.CNPJ = doc
	} else {
		body.Devedor.CPF = doc
	}
	body.Calendario, body.Valor = cobv.Encode(*req.Due)
	return body, nil
}

// cobvResponse is the charge's cob: the PSP's cobv out, opened for req.
func (a *Acquirer) cobvResponse(req ports.CreatePixChargeRequest, out cobvBody) (*ports.CreatePixChargeResponse, error) {
	if out.PixCopiaECola == "" || out.Location == "" {
		return nil, fmt.Errorf("%w: the PSP answered a cobv without pixCopiaECola or location", ports.ErrAcquirerUnavailable)
	}
	return &ports.CreatePixChargeResponse{
		BRCode:      out.PixCopiaECola,
		TxID:        req.TxID,
		Location:    out.Location,
		ExpiresAt:   req.ExpiresAt,
		ProviderRef: refPrefix + req.AccountID + ":" + req.TxID,
	}, nil
}

// sameCobV reports whether got holds the terms and key asked for in want:
// the amount, the due date and the rules. A PSP states
// validadeAposVencimento when it was not sent; that is no difference.
func sameCobV(got, want cobvBody) bool {
	if got.Chave != want.Chave || got.Calendario.DataDeVencimento != want.Calendario.DataDeVencimento ||
		(want.Calendario.ValidadeAposVencimento != nil && (got.Calendario.ValidadeAposVencimento == nil ||
			*got.Calendario.ValidadeAposVencimento != *want.Calendario.ValidadeAposVencimento)) {
		return false
	}
	g, w := got.Valor, want.Valor
	return decimalEqual(g.Original, w.Original) && ruleEqual(g.Multa, w.Multa) && ruleEqual(g.Juros, w.Juros) &&
		ruleEqual(g.Abatimento, w.Abatimento) && discountEqual(g.Desconto, w.Desconto)
}

func discountEqual(a, b *cobv.Desconto) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Modalidade != b.Modalidade || len(a.DescontoDataFixa) != len(b.DescontoDataFixa) ||
		(b.ValorPerc != "" && !decimalEqual(a.ValorPerc, b.ValorPerc)) {
		return false
	}
	for i, t := range b.DescontoDataFixa {
		if a.DescontoDataFixa[i].Data != t.Data || !decimalEqual(a.DescontoDataFixa[i].ValorPerc, t.ValorPerc) {
			return false
		}
	}
	return true
}

func ruleEqual(a, b *cobv.Rule) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Modalidade == b.Modalidade && decimalEqual(a.ValorPerc, b.ValorPerc)
}

func decimalEqual(a, b string) bool {
	x, errA := domain.ParseDecimal(a)
	y, errB := domain.ParseDecimal(b)
	return errA == nil && errB == nil && x == y
}
