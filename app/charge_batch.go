package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// ErrBatchesNotSupported: the service was wired without a batch store.
var ErrBatchesNotSupported = errors.New("batches of charges are not available")

// DescribeError renders a create's error as the charges surface answers
// it; ok is false for an error the surface does not know (an unexpected
// failure, which is retried).
type DescribeError func(err error) (e ports.ChargeBatchError, ok bool)

// BatchItem is one charge of a batch as the surface decoded it: the
// create's input, or Err, why it could not be decoded (the item is then
// refused with it).
type BatchItem struct {
	Input CreateChargeInput
	Err   error
}

// ChargeBatch is a batch of charge creates as the surfaces show it.
type ChargeBatch struct {
	ports.ChargeBatch
	Items []ChargeBatchItem
}

// ChargeBatchItem is one item of a shown batch.
type ChargeBatchItem struct {
	Index  int
	Status domain.BatchItemStatus
	// ChargeID is the raw id of the item's charge once created, and Charge
	// the charge as read (GetBatch; nil in the create's answer).
	ChargeID string
	Charge   *domain.Charge
	Error    *ports.ChargeBatchError
}

// errBatchNeedsDueDate refuses an item without due_date: a batch is of
// due-date charges (the API Pix's lotecobv), docs/decisions.md.
var errBatchNeedsDueDate = domain.NewValidationError(domain.FieldDueDate, domain.CodeParameterMissing,
	"%s is required: a batch holds due-date charges only", domain.FieldDueDate)

// CreateBatch accepts a batch of due-date charge creates exactly once per
// idempotency key and answers it as respond renders it. Each item is
// checked as a create would check it (an item without a due date is
// refused too), and one that fails is refused with its error without
// failing the others. The batch and its items commit with the key's record
// in one transaction; their charges are created afterwards, at once in
// the background and by the batch worker for whatever a crash or a
// failure left (ProcessChargeBatches), each under a key of its own derived
// from the batch, so each item's charge is created once.
func (s *ChargeService) CreateBatch(ctx context.Context, caller Caller, items []BatchItem, idem Idempotency, respond Respond[*ChargeBatch]) (Response, error) {
	if s.cfg.Batches == nil {
		return Response{}, ErrBatchesNotSupported
	}
	if len(items) == 0 || len(items) > domain.MaxBatchCharges {
		return Response{}, fmt.Errorf("app: a batch holds 1 to %d charges, not %d", domain.MaxBatchCharges, len(items))
	}
	return s.once.Do(ctx, caller.Scope(), idem, exactlyonce.Options{}, func(a *exactlyonce.Attempt) (Response, error) {
		return s.createBatch(ctx, caller, items, a, respond)
	})
}

func (s *ChargeService) createBatch(ctx context.Context, caller Caller, items []BatchItem, a *exactlyonce.Attempt, respond Respond[*ChargeBatch]) (Response, error) {
	id, err := s.ids.NewID()
	if err != nil {
		return Response{}, err
	}
	now := s.clock.Now()
	b := ports.ChargeBatch{Scope: caller.Scope(), ID: id, Status: domain.BatchProcessing, Total: len(items),
		MerchantName: caller.Account.MerchantName, MerchantCity: caller.Account.MerchantCity, CreatedAt: now}
	rows := make([]ports.ChargeBatchItem, len(items))
	for i, it := range items {
		rows[i] = ports.ChargeBatchItem{Index: i, Status: domain.BatchItemPending}
		err := it.Err
		if err == nil {
			err = s.checkBatchItem(caller, it.Input, id, now)
		}
		if err == nil {
			rows[i].Input, err = encodeBatchInput(it.Input)
		}
		if err == nil {
			b.Pending++
			continue
		}
		e, known := s.describeBatchError(err)
		if !known || !finalRefusal(err, e) {
			return Response{}, err
		}
		rows[i].Status, rows[i].Error = domain.BatchItemRefused, &e
		b.Refused++
	}
	if b.Pending == 0 {
		b.Status, b.CompletedAt = domain.BatchCompleted, now
	}
	answer, err := respond(batchView(b, rows, nil))
	if err != nil {
		return Response{}, err
	}
	rec := a.Record(id, answer, now)
	if err := s.cfg.Batches.CreateChargeBatch(ctx, b, rows, rec, now.Add(batchLease)); err != nil {
		return Response{}, err
	}
	if b.Pending > 0 {
		s.runBatchInBackground(ports.ChargeBatchRef{Scope: b.Scope, ID: id})
	}
	return Response{StatusCode: rec.StatusCode, Body: rec.Body}, nil
}

// checkBatchItem is what a create would refuse in, checked when the batch
// is accepted: a due date, then domain.NewCharge's rules and the
// acquirer's support of due-date charges (id stands for the charge's).
// The create checks again when it runs.
func (s *ChargeService) checkBatchItem(caller Caller, in CreateChargeInput, id string, now time.Time) error {
	if in.Due == nil {
		return errBatchNeedsDueDate
	}
	if len(in.Splits) > 0 || in.FeePayer != "" {
		return domain.Invalid(domain.FieldSplits, "the charges of a batch take no %s", domain.FieldSplits)
	}
	_, err := s.newCharge(caller, in, id, now)
	return err
}

// GetBatch reads a batch of the caller with its items and their charges
// (a charge whose expiry is final is expired first, as Get does).
// ErrNotFound when the batch is not the caller's.
func (s *ChargeService) GetBatch(ctx context.Context, caller Caller, id string) (*ChargeBatch, error) {
	if s.cfg.Batches == nil {
		return nil, ports.ErrNotFound
	}
	b, items, err := s.cfg.Batches.GetChargeBatch(ctx, caller.Scope(), id)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, it := range items {
		if it.Status == domain.BatchItemCreated {
			ids = append(ids, it.ChargeID)
		}
	}
	cs, err := s.cfg.Batches.ChargesByID(ctx, caller.Scope(), ids)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	byID := make(map[string]*domain.Charge, len(cs))
	for _, c := range cs {
		if s.expiryDue(c, now) {
			if c, err = s.expireIfDue(ctx, caller.Scope(), c); err != nil {
				return nil, err
			}
		}
		byID[c.ID()] = c
	}
	return batchView(*b, items, byID), nil
}

// batchView is b with its items as shown, each created one with its charge
// from charges when there.
func batchView(b ports.ChargeBatch, items []ports.ChargeBatchItem, charges map[string]*domain.Charge) *ChargeBatch {
	out := &ChargeBatch{ChargeBatch: b, Items: make([]ChargeBatchItem, len(items))}
	for i, it := range items {
		out.Items[i] = ChargeBatchItem{Index: it.Index, Status: it.Status, ChargeID: it.ChargeID, Charge: charges[it.ChargeID], Error: it.Error}
	}
	return out
}

// describeBatchError renders err with cfg.BatchErrors (plainBatchError
// when none).
func (s *ChargeService) describeBatchError(err error) (ports.ChargeBatchError, bool) {
	if s.cfg.BatchErrors != nil {
		return s.cfg.BatchErrors(err)
	}
	return plainBatchError(err)
}

// finalRefusal reports whether err, described as e, refuses the item for
// good: a 4xx about the request, not a conflict or a limit that passes.
func finalRefusal(err error, e ports.ChargeBatchError) bool {
	return e.Status >= 400 && e.Status < 500 && e.Status != http.StatusTooManyRequests && e.Status != 499 &&
		!errors.Is(err, ErrIdempotencyKeyInUse)
}

// plainBatchError is DescribeError for a service wired without the HTTP
// layer's: validation errors with the domain's field names, the
// capability refusals, the outages (retried); anything else is unknown.
func plainBatchError(err error) (ports.ChargeBatchError, bool) {
	var ve *domain.ValidationError
	switch {
	case errors.As(err, &ve):
		return ports.ChargeBatchError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: ve.Code,
			Message: ve.Message(func(f domain.Field) string { return string(f) }), Param: string(ve.Field)}, true
	case errors.Is(err, ErrDueDateNotSupported):
		return ports.ChargeBatchError{Status: http.StatusUnprocessableEntity, Type: "invalid_request_error",
			Code: "due_date_not_supported", Message: err.Error(), Param: string(domain.FieldDueDate)}, true
	case errors.Is(err, ports.ErrAcquirerRejected):
		return ports.ChargeBatchError{Status: http.StatusUnprocessableEntity, Type: "provider_error",
			Code: "acquirer_rejected", Message: "the acquirer rejected the request"}, true
	case errors.Is(err, ports.ErrAcquirerUnavailable), errors.Is(err, ports.ErrStoreUnavailable):
		return ports.ChargeBatchError{Status: http.StatusServiceUnavailable, Type: "api_error",
			Code: "service_unavailable", Message: "unavailable for now"}, true
	}
	return ports.ChargeBatchError{}, false
}
