package bcbpix

import (
	"context"
	"errors"
	"fmt"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/cobv"
	"github.com/quitapix/quita/ports"
)

var _ ports.DueDateReviser = (*Acquirer)(nil)

// ReviseDueCharge implements ports.DueDateReviser with PATCH /cobv/{txid}
// (CobVRevisada). The body states the whole of the terms, whatever the
// revision changed: calendario with dataDeVencimento and
// validadeAposVencimento, and valor with original and every rule, a rule
// the terms lack sent as null. A PSP that merges a PATCH member by member
// and one that replaces valor whole both end with exactly these terms, and
// the same PATCH again changes nothing (revisao stays). The answer
// (CobVGerada) must hold the terms sent, else the revision is refused.
func (a *Acquirer) ReviseDueCharge(ctx context.Context, req ports.ReviseDueChargeRequest) error {
	if req.TxID == "" {
		return fmt.Errorf("%w: the charge has no txid at the PSP", ports.ErrAcquirerRejected)
	}
	c, err := a.client(ctx, req.AccountID)
	if err != nil {
		return err
	}
	cal, val := cobv.Encode(req.Due)
	body := map[string]any{
		"calendario": cal,
		"valor": map[string]any{"original": val.Original, "multa": val.Multa, "juros": val.Juros,
			"abatimento": val.Abatimento, "desconto": val.Desconto},
	}
	var out cobvBody
	err = c.do(ctx, "PATCH", "/cobv/"+req.TxID, body, &out, true)
	if errors.Is(err, ports.ErrNotFound) {
		return fmt.Errorf("%w: the PSP has no cobv %s", ports.ErrAcquirerRejected, req.TxID)
	}
	if err != nil {
		return err
	}
	if !sameCobV(out, cobvBody{Chave: out.Chave, Calendario: cal, Valor: val}) {
		return fmt.Errorf("%w: the PSP answered the revision of cobv %s with other terms", ports.ErrAcquirerRejected, req.TxID)
	}
	return nil
}
