package app

import (
	"context"
	"errors"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// viaLote asks the acquirer for the cobs of the batch's pending items in
// one request (the API Pix's lotecobv) and returns the pending items whose
// charge this run creates: those whose cob the request opened (their
// creates read it), and those the request does not cover (their creates
// ask for it). An item whose cob the acquirer refused is refused with
// that refusal; one it has not decided on yet waits for a later run.
//
// The request's items and their txids are saved before the acquirer hears
// of them (LoteAsked): a run after a crash asks again for exactly those,
// which the acquirer takes as the same request. Once the acquirer accepts
// it, the batch is LoteOpened and later runs only read how it stands.
func (r *batchRun) viaLote(ctx context.Context, batcher ports.DueDateBatcher, items []ports.ChargeBatchItem) ([]ports.ChargeBatchItem, error) {
	if r.b.Lote == ports.LoteNone {
		var chosen []ports.ChargeBatchItem
		for i, it := range items {
			if it.Status != domain.BatchItemPending {
				continue
			}
			if _, ok := r.loteCharge(it); ok {
				items[i].TxID = batchItemTxID(r.ref.Scope, r.ref.ID, it.Index)
				chosen = append(chosen, items[i])
			}
		}
		state := ports.LoteAsked
		if len(chosen) == 0 {
			state = ports.LoteSkipped
		}
		if err := r.save(ctx, chosen, &state, batchLease); err != nil {
			return nil, err
		}
	}
	if r.b.Lote == ports.LoteAsked {
		if err := r.openLote(ctx, batcher, items); err != nil {
			return nil, err
		}
	}
	pending := pendingItems(items)
	if r.b.Lote != ports.LoteOpened {
		return pending, nil // skipped: one by one
	}
	status, err := r.loteStatus(ctx, batcher)
	if errors.Is(err, ports.ErrNotFound) {
		// Accepted, yet unknown to the acquirer: ask again next run.
		asked := ports.LoteAsked
		if serr := r.save(ctx, nil, &asked, batchRetry); serr != nil {
			return nil, serr
		}
	}
	if err != nil {
		return nil, err
	}
	var todo, refused []ports.ChargeBatchItem
	for _, it := range pending {
		st, listed := status[it.TxID]
		switch {
		case it.TxID == "" || !listed:
			todo = append(todo, it)
		case st.Pending:
		case st.Opened:
			r.opened[it.Index] = true
			todo = append(todo, it)
		default:
			e, known := r.s.describeBatchError(st.Refusal)
			if !known {
				e, _ = plainBatchError(ports.ErrAcquirerRejected)
			}
			it.Status, it.Error = domain.BatchItemRefused, &e
			refused = append(refused, it)
		}
	}
	if len(refused) > 0 {
		if err := r.save(ctx, refused, nil, batchLease); err != nil {
			return nil, err
		}
	}
	return todo, nil
}

// loteCharge is the cob item's create would ask for, as the batch was
// accepted (its charge id still unknown); false when the item would not
// validate so (its create will refuse it).
func (r *batchRun) loteCharge(it ports.ChargeBatchItem) (ports.CreatePixChargeRequest, bool) {
	in, err := decodeBatchInput(it.Input)
	if err != nil {
		return ports.CreatePixChargeRequest{}, false
	}
	c, err := r.s.newCharge(r.caller, in, r.ref.ID, r.b.CreatedAt)
	if err != nil {
		return ports.CreatePixChargeRequest{}, false
	}
	req := cobRequest(r.caller, c, in, it.TxID)
	req.ChargeID = ""
	return req, true
}

// openLote sends the batch's request for the cobs of the items that carry
// a txid, whatever they became since, and records that the acquirer took
// it. A request refused as a whole (or an account without the acquirer)
// sends the items one by one instead; any other failure is left for a
// later run.
func (r *batchRun) openLote(ctx context.Context, batcher ports.DueDateBatcher, items []ports.ChargeBatchItem) error {
	req := ports.DueDateBatchRequest{Scope: r.ref.Scope, BatchID: r.ref.ID}
	for _, it := range items {
		if it.TxID == "" {
			continue
		}
		c, ok := r.loteCharge(it)
		if !ok {
			continue // it validated when chosen, and nothing it depends on changes
		}
		req.Charges = append(req.Charges, c)
	}
	err := batcher.OpenDueDateBatch(ctx, req)
	state := ports.LoteOpened
	switch {
	case errors.Is(err, ports.ErrAcquirerRejected), errors.Is(err, ports.ErrAcquirerNotConfigured):
		r.s.log.WarnContext(ctx, "the acquirer refused a charge batch's request; its charges go one by one",
			"batch", domain.PrefixChargeBatch+r.ref.ID, "err", err)
		state = ports.LoteSkipped
	case err != nil:
		return err
	}
	return r.save(ctx, nil, &state, batchLease)
}

// loteStatus reads how each cob of the batch's request stands, by txid,
// asking again (for at most loteWait) while the acquirer has not decided
// on some of them.
func (r *batchRun) loteStatus(ctx context.Context, batcher ports.DueDateBatcher) (map[string]ports.DueDateBatchItem, error) {
	deadline := time.Now().Add(loteWait)
	wait := 50 * time.Millisecond
	for {
		items, err := batcher.DueDateBatchStatus(ctx, r.ref.Scope, r.ref.ID)
		if err != nil {
			return nil, err
		}
		out := make(map[string]ports.DueDateBatchItem, len(items))
		undecided := false
		for _, it := range items {
			out[it.TxID] = it
			undecided = undecided || it.Pending
		}
		if !undecided || time.Now().Add(wait).After(deadline) {
			return out, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return out, nil
		case <-t.C:
		}
		wait = min(2*wait, time.Second)
	}
}
