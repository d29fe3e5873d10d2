package app

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

const (
	// batchLease is how long a process holds a batch it works on before
	// another may take it over; each saved chunk renews it.
	batchLease = time.Minute
	// batchRetry is how soon a batch whose run left items pending (a
	// failure that may pass, an acquirer still deciding) is run again.
	batchRetry = 5 * time.Second
	// batchRunTimeout bounds the run a batch create starts in the
	// background; the worker takes over what it leaves.
	batchRunTimeout = 2 * time.Minute
	// batchChunk is how many items are created between two saves of
	// their outcomes: a crash loses at most a chunk's saves, which the
	// next run replays from the items' own idempotency records.
	batchChunk = 50
	// batchConcurrency is how many of a chunk's creates run at once.
	batchConcurrency = 8
	// batchClaim is how many batches one worker tick takes.
	batchClaim = 4
	// maxUnknownAttempts is how many runs an item may fail with an error
	// nobody knows before it is refused (errors known to pass, such as an
	// acquirer or database outage, are retried for as long as they last).
	maxUnknownAttempts = 5
	// loteWait bounds how long one run waits for the acquirer to decide
	// the cobs of the batch's request; the next run asks again.
	loteWait = 20 * time.Second
)

// errBatchItemFailed is the error of an item refused after
// maxUnknownAttempts unexpected failures.
var errBatchItemFailed = ports.ChargeBatchError{Status: http.StatusInternalServerError, Type: "api_error", Code: "internal_error",
	Message: "the charge could not be created; create it again, alone or in another batch"}

// ProcessChargeBatches is the batch worker: it leases processing batches
// no process is working on (a crash, a run that timed out or left items
// to retry) and runs each. Safe in every process at once: the lease keeps
// two processes off one batch, and were they to meet, each item's charge
// is created under the item's own key, so once.
func (s *ChargeService) ProcessChargeBatches(ctx context.Context) (int, error) {
	if s.cfg.Batches == nil {
		return 0, nil
	}
	now := s.clock.Now()
	refs, err := s.cfg.Batches.ClaimChargeBatches(ctx, now, now.Add(batchLease), batchClaim)
	if err != nil || len(refs) == 0 {
		return 0, err
	}
	var first error
	for _, ref := range refs {
		if err := s.runBatch(ctx, ref); err != nil {
			first = cmp.Or(first, err)
		}
	}
	return len(refs), first
}

// runBatchInBackground runs a batch just accepted, after its create has
// answered; what it leaves is the worker's.
func (s *ChargeService) runBatchInBackground(ref ports.ChargeBatchRef) {
	s.background.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), batchRunTimeout)
		defer cancel()
		if err := s.runBatch(ctx, ref); err != nil {
			s.log.WarnContext(ctx, "charge batch left to the batch worker", "batch", domain.PrefixChargeBatch+ref.ID, "err", err)
		}
	})
}

// batchRun is one run of a batch by the process that holds its lease.
type batchRun struct {
	s      *ChargeService
	ref    ports.ChargeBatchRef
	b      *ports.ChargeBatch
	caller Caller
	// opened are the items whose cob the batch's request to the acquirer
	// opened: their creates read it instead of asking for it.
	opened map[int]bool
}

// runBatch creates the pending items' charges, a chunk at a time, saving
// each chunk's outcomes with the batch's counts (and a renewed lease).
// With an acquirer that opens due-date charges in batches, their cobs are
// asked for together first (viaLote). It returns with items still pending
// when a failure may pass; the batch is then run again within batchRetry.
func (s *ChargeService) runBatch(ctx context.Context, ref ports.ChargeBatchRef) (err error) {
	b, items, err := s.cfg.Batches.GetChargeBatch(ctx, ref.Scope, ref.ID)
	if err != nil || b.Status == domain.BatchCompleted {
		return err
	}
	r := &batchRun{s: s, ref: ref, b: b, opened: map[int]bool{},
		caller: Caller{Account: domain.Account{ID: ref.AccountID, MerchantName: b.MerchantName, MerchantCity: b.MerchantCity}, Mode: ref.Mode}}
	defer r.release(ctx)
	todo := pendingItems(items)
	if batcher, ok := ports.DueDateBatches(s.acquirer.Acquirer, ref.Scope); ok && b.Lote != ports.LoteSkipped {
		if todo, err = r.viaLote(ctx, batcher, items); err != nil {
			return err
		}
	}
	for lo := 0; lo < len(todo); lo += batchChunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := r.save(ctx, r.createChunk(ctx, todo[lo:min(lo+batchChunk, len(todo))]), nil, batchLease); err != nil {
			return err
		}
	}
	return nil
}

func pendingItems(items []ports.ChargeBatchItem) []ports.ChargeBatchItem {
	out := make([]ports.ChargeBatchItem, 0, len(items))
	for _, it := range items {
		if it.Status == domain.BatchItemPending {
			out = append(out, it)
		}
	}
	return out
}

// save writes items' outcomes and lote (when not nil) and leases the
// batch for lease more.
func (r *batchRun) save(ctx context.Context, items []ports.ChargeBatchItem, lote *string, lease time.Duration) error {
	now := r.s.clock.Now()
	b, err := r.s.cfg.Batches.SaveChargeBatchItems(ctx, r.ref, items, lote, now, now.Add(lease))
	if err != nil {
		return err
	}
	r.b = b
	return nil
}

// release shortens the lease of a batch the run leaves with items
// pending, so that the worker runs it again within batchRetry rather than
// when the lease would have ended. It runs even when ctx has ended.
func (r *batchRun) release(ctx context.Context) {
	if r.b.Status == domain.BatchCompleted {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := r.save(ctx, nil, nil, batchRetry); err != nil {
		r.s.log.WarnContext(ctx, "release a charge batch", "batch", domain.PrefixChargeBatch+r.ref.ID, "err", err)
	}
}

// createChunk creates the charges of items, batchConcurrency at a time,
// and returns each item with its outcome; the items left pending are
// logged in one line.
func (r *batchRun) createChunk(ctx context.Context, items []ports.ChargeBatchItem) []ports.ChargeBatchItem {
	out := make([]ports.ChargeBatchItem, len(items))
	left := make([]error, len(items))
	sem := make(chan struct{}, batchConcurrency)
	var wg sync.WaitGroup
	for i, it := range items {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			out[i], left[i] = r.createItem(ctx, it)
		})
	}
	wg.Wait()
	n, first := 0, error(nil)
	for _, err := range left {
		if err != nil {
			n, first = n+1, cmp.Or(first, err)
		}
	}
	if n > 0 && ctx.Err() == nil {
		r.s.log.WarnContext(ctx, "charge batch items left pending", "batch", domain.PrefixChargeBatch+r.ref.ID, "items", n, "err", first)
	}
	return out
}

// answerChargeID is a batch item's create's answer: the charge's raw id.
// Only the batch's runs read it (the item's key is none a request can
// send).
func answerChargeID(c *domain.Charge) (Response, error) {
	return Response{StatusCode: http.StatusCreated, Body: []byte(c.ID())}, nil
}

// createItem creates the charge of item it through the create path,
// under the item's key (exactlyonce.Options.DatabaseOnly: its txid is the
// one derived from the key, the one a batch request to the acquirer
// named), and returns it created, refused with the create's error, or
// still pending, with the failure that may pass. An item refused after
// the batch's request opened its cob has that cob cancelled first, so
// that no cob stays payable without a charge.
func (r *batchRun) createItem(ctx context.Context, it ports.ChargeBatchItem) (ports.ChargeBatchItem, error) {
	in, err := decodeBatchInput(it.Input)
	if err == nil {
		in.openedInBatch = r.opened[it.Index]
		idem := Idempotency{Key: batchItemKey(r.ref.ID, it.Index), Fingerprint: batchItemFingerprint(r.ref.ID, it.Index, it.Input)}
		var resp Response
		resp, err = r.s.once.Do(ctx, r.ref.Scope, idem, exactlyonce.Options{LiveCob: true, DatabaseOnly: true},
			func(a *exactlyonce.Attempt) (Response, error) {
				return r.s.create(ctx, r.caller, in, a, answerChargeID)
			})
		if err == nil {
			it.Status, it.ChargeID = domain.BatchItemCreated, string(resp.Body)
			return it, nil
		}
	}
	e, known := r.s.describeBatchError(err)
	switch {
	case known && finalRefusal(err, e):
	case !known && it.Attempts+1 >= maxUnknownAttempts:
		r.s.log.ErrorContext(ctx, "charge batch item refused after repeated failures", "batch", domain.PrefixChargeBatch+r.ref.ID,
			"item", it.Index, "err", err)
		e = errBatchItemFailed
	default:
		if !known {
			it.Attempts++
		}
		return it, err
	}
	if it.TxID != "" && r.b.Lote == ports.LoteOpened {
		cerr := r.s.acquirer.CancelPixCharge(ctx, ports.CancelPixChargeRequest{Scope: r.ref.Scope, TxID: it.TxID})
		if errors.Is(cerr, ports.ErrAcquirerUnavailable) || errors.Is(cerr, ports.ErrAcquirerUnauthorized) {
			return it, cerr // the cob must go before the item is refused
		}
	}
	it.Status, it.Error = domain.BatchItemRefused, &e
	return it, nil
}
