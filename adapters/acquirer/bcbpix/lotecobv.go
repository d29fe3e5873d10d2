package bcbpix

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

var _ ports.DueDateBatcher = (*Acquirer)(nil)

// The statuses of a cobv request in a lote (LoteCobVConsultado).
const (
	loteProcessing = "EM_PROCESSAMENTO"
	loteCreated    = "CRIADA"
	loteRefused    = "NEGADA"
)

// loteBody is PUT /lotecobv/{id}'s body: a description and the cobvs,
// each a CobVSolicitada with its txid.
type loteBody struct {
	Descricao string     `json:"descricao"`
	CobsV     []cobvBody `json:"cobsv"`
}

// loteAnswer is GET /lotecobv/{id}'s answer (LoteCobVConsultado).
type loteAnswer struct {
	ID    int64 `json:"id"`
	CobsV []struct {
		TxID     string   `json:"txid"`
		Status   string   `json:"status"`
		Problema *Problem `json:"problema"`
	} `json:"cobsv"`
}

// SupportsDueDateBatches reports that the API Pix opens due-date charges
// in lotes for every account.
func (a *Acquirer) SupportsDueDateBatches(ports.Scope) bool { return true }

// loteID is the lote of batch batchID of account: a number (the API Pix
// answers a lote's id as an integer), derived from both, so every run of
// the batch names the same lote and two batches almost surely never do. 53
// bits, so that a PSP that reads JSON numbers as doubles keeps it whole.
func loteID(accountID, batchID string) string {
	sum := sha256.Sum256([]byte(domain.DeriveTxID("lotecobv", accountID, batchID)))
	return strconv.FormatUint(binary.BigEndian.Uint64(sum[:8])>>11+1, 10)
}

// OpenDueDateBatch implements ports.DueDateBatcher with PUT
// /lotecobv/{id} (answered 202). Asking again with the same cobvs is a
// revision of the lote that changes nothing, so a retry after a lost
// answer is safe; the PSP then decides each cobv on its own time
// (DueDateBatchStatus).
func (a *Acquirer) OpenDueDateBatch(ctx context.Context, req ports.DueDateBatchRequest) error {
	if len(req.Charges) == 0 {
		return fmt.Errorf("%w: a lote needs at least one cobv", ports.ErrAcquirerRejected)
	}
	c, err := a.client(ctx, req.AccountID)
	if err != nil {
		return err
	}
	body := loteBody{Descricao: "Quita " + domain.PrefixChargeBatch + req.BatchID, CobsV: make([]cobvBody, len(req.Charges))}
	for i, ch := range req.Charges {
		if !domain.ValidTxID(ch.TxID) {
			return fmt.Errorf("%w: txid %q", ports.ErrAcquirerRejected, ch.TxID)
		}
		cb, err := newCobVBody(c, ch)
		if err != nil {
			return err
		}
		cb.TxID = ch.TxID
		body.CobsV[i] = cb
	}
	err = c.do(ctx, "PUT", "/lotecobv/"+loteID(req.AccountID, req.BatchID), body, nil, true)
	if errors.Is(err, ports.ErrNotFound) {
		return fmt.Errorf("%w: %w", ports.ErrAcquirerRejected, err)
	}
	return err
}

// DueDateBatchStatus implements ports.DueDateBatcher with GET
// /lotecobv/{id}: EM_PROCESSAMENTO is pending, CRIADA opened, NEGADA
// refused with the PSP's problem. A status the API Pix does not name is
// read as pending.
func (a *Acquirer) DueDateBatchStatus(ctx context.Context, scope ports.Scope, batchID string) ([]ports.DueDateBatchItem, error) {
	c, err := a.client(ctx, scope.AccountID)
	if err != nil {
		return nil, err
	}
	var out loteAnswer
	if err := c.do(ctx, "GET", "/lotecobv/"+loteID(scope.AccountID, batchID), nil, &out, true); err != nil {
		return nil, err
	}
	items := make([]ports.DueDateBatchItem, len(out.CobsV))
	for i, cv := range out.CobsV {
		it := ports.DueDateBatchItem{TxID: cv.TxID}
		switch cv.Status {
		case loteCreated:
			it.Opened = true
		case loteRefused:
			p := cv.Problema
			if p == nil {
				p = &Problem{Title: "cobrança negada"}
			}
			it.Refusal = fmt.Errorf("%w: %w", ports.ErrAcquirerRejected, p)
		case loteProcessing:
			it.Pending = true
		default: // a status the API Pix does not name: undecided, as far as Quita knows
			it.Pending = true
		}
		items[i] = it
	}
	return items, nil
}
