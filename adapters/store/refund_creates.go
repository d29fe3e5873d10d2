package store

import (
	"context"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/groupcommit"
	"github.com/quitapix/quita/ports"
)

// refundCreate is one RefundCharge call: the charge and its change.
type refundCreate struct {
	ref    ports.ChargeRef
	change ports.ChargeChangeFunc
}

// refundBatchTimeout bounds one batch of refund creates, with the lone
// runs after it failed.
const refundBatchTimeout = 10 * time.Second

// newRefundGroup batches refund creates on either dialect: every refund
// of an account debits the same wallet row, so one transaction each would
// queue them behind each other's commits. A batch names each charge once
// (UpdateCharges), so a second create of one charge waits for the next.
func (db *DB) newRefundGroup() *groupcommit.Group[refundCreate, struct{}] {
	return groupcommit.New(groupcommit.Config[refundCreate, struct{}]{
		Batch: db.updateRefundCharges, Single: db.updateRefundCharge,
		MaxFlights: coalesceFlights, MaxBatch: coalesceMaxBatch, Timeout: refundBatchTimeout, Final: storeUnavailable,
		Key: func(c refundCreate) string { return c.ref.ID },
	})
}

// RefundCharge implements ports.PaymentStore: UpdateCharge, written in one
// transaction with the RefundCharge calls of other charges that arrive
// meanwhile (db.refunds; the failure rule is internal/groupcommit's).
func (db *DB) RefundCharge(ctx context.Context, ref ports.ChargeRef, fn ports.ChargeChangeFunc) error {
	_, err := db.refunds.Do(ctx, refundCreate{ref: ref, change: fn})
	return err
}

// updateRefundCharges writes cs with one UpdateCharges: each create's own
// error (its change refused, its charge not in scope) is its result, an
// error writing the batch the batch's.
func (db *DB) updateRefundCharges(ctx context.Context, cs []refundCreate, results []groupcommit.Result[struct{}]) error {
	refs := make([]ports.ChargeRef, len(cs))
	byCharge := make(map[string]ports.ChargeChangeFunc, len(cs))
	for i, c := range cs {
		refs[i] = c.ref
		byCharge[c.ref.ID] = c.change
	}
	errs, err := db.UpdateCharges(ctx, refs, func(ctx context.Context, c *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
		return byCharge[c.ID()](ctx, c, tx)
	})
	if err != nil {
		return err
	}
	for i, err := range errs {
		results[i].Err = err
	}
	return nil
}

func (db *DB) updateRefundCharge(ctx context.Context, c refundCreate) (struct{}, error) {
	return struct{}{}, db.UpdateCharge(ctx, c.ref.Scope, c.ref.ID, c.change)
}
