package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

var _ ports.SubscriptionStore = (*DB)(nil)

// Every statement on subscriptions and subscription_cycles is in this
// file. A cycle's charge is written with insertCharge, the statements of
// any create, in the transaction that inserts the cycle.

// CreateSubscription implements ports.SubscriptionStore.
func (db *DB) CreateSubscription(ctx context.Context, s *domain.Subscription, events []domain.Event, first *domain.Charge,
	firstEvents []domain.Event, rec *ports.IdempotencyRecord,
) error {
	row, err := subscriptionFromDomain(s)
	if err != nil {
		return err
	}
	var firstCharge *chargeCreate
	if first != nil {
		crow, err := chargeFromDomain(first.Snapshot())
		if err != nil {
			return err
		}
		firstCharge = &chargeCreate{row: crow, evs: eventsFromDomain(firstEvents)}
	}
	err = db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var qs []schema.QueryAppender
		if rec != nil {
			qs = append(qs, tx.NewInsert().Model(idempotencyFromPort(rec)))
			if rec.SettlesIntent {
				qs = append(qs, tx.NewDelete().Model((*providerIntentRow)(nil)).Where("account_id = ?", rec.AccountID).
					Where("mode = ?", string(rec.Mode)).Where("idem_key = ?", rec.Key))
			}
		}
		qs = append(qs, tx.NewInsert().Model(row))
		if evs := eventsFromDomain(events); len(evs) > 0 {
			qs = append(qs, tx.NewInsert().Model(&evs))
		}
		if err := execBatch(ctx, tx, qs...); err != nil {
			return err
		}
		if firstCharge != nil {
			return insertCharge(ctx, tx, *firstCharge)
		}
		return nil
	})
	if err = mapError(err); err != nil {
		return err
	}
	db.signals.committed(SignalEvents)
	if first != nil {
		db.signals.local(SignalStats)
	}
	return nil
}

// GetSubscription implements ports.SubscriptionStore.
func (db *DB) GetSubscription(ctx context.Context, scope ports.Scope, id string) (*domain.Subscription, error) {
	row := new(subscriptionRow)
	if err := scopedByID(ctx, db.bun.NewSelect().Model(row), "sb.id", id, scope, &row.AccountID, &row.Mode); err != nil {
		return nil, err
	}
	return row.toDomain()
}

// GetSubscriptionByID implements ports.SubscriptionStore.
func (db *DB) GetSubscriptionByID(ctx context.Context, id string) (*domain.Subscription, error) {
	row := new(subscriptionRow)
	if err := db.bun.NewSelect().Model(row).Where("sb.id = ?", id).Scan(ctx); err != nil {
		return nil, mapError(err)
	}
	return row.toDomain()
}

// subscriptionTx is ports.SubscriptionTx inside UpdateSubscription.
type subscriptionTx struct {
	tx    bun.IDB
	subID string
}

func (t *subscriptionTx) Cycle(ctx context.Context, k int) (*domain.Cycle, error) {
	row := new(cycleRow)
	err := t.tx.NewSelect().Model(row).Where("sc.subscription_id = ?", t.subID).Where("sc.cycle = ?", k).Scan(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	return row.toDomain()
}

func (t *subscriptionTx) OpenCycles(ctx context.Context) ([]*domain.Cycle, error) {
	var rows []cycleRow
	err := t.tx.NewSelect().Model(&rows).Where("sc.subscription_id = ?", t.subID).
		Where("sc.status IN ('CRIADA', 'ATIVA')").OrderExpr("sc.cycle").Scan(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	return cyclesToDomain(rows)
}

func cyclesToDomain(rows []cycleRow) ([]*domain.Cycle, error) {
	out := make([]*domain.Cycle, len(rows))
	for i := range rows {
		c, err := rows[i].toDomain()
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// errSubscriptionIdentity: a change moved a subscription to another id,
// account or mode, which no change may do.
var errSubscriptionIdentity = errors.New("store: a subscription change altered its identity")

// UpdateSubscription implements ports.SubscriptionStore. The new cycle's
// row goes in before its charge, so a second charge for a cycle fails on
// the cycle's primary key (and, were that row gone, on the charges'
// unique (subscription_id, subscription_cycle)) before anything else of
// the change is written.
func (db *DB) UpdateSubscription(ctx context.Context, scope ports.Scope, id string, fn ports.SubscriptionChangeFunc) error {
	events := false
	err := db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		events = false
		row := new(subscriptionRow)
		q := tx.NewSelect().Model(row).Where("sb.id = ?", id)
		if postgres(tx) {
			q = q.For("UPDATE")
		}
		if err := q.Scan(ctx); err != nil {
			return mapError(err)
		}
		if row.AccountID != scope.AccountID || row.Mode != string(scope.Mode) {
			return ports.ErrNotFound
		}
		s, err := row.toDomain()
		if err != nil {
			return err
		}
		change, err := fn(ctx, s, &subscriptionTx{tx: tx, subID: id})
		if err != nil {
			return err
		}
		upd, err := subscriptionFromDomain(s)
		if err != nil {
			return err
		}
		if upd.ID != row.ID || upd.AccountID != row.AccountID || upd.Mode != row.Mode {
			return errSubscriptionIdentity
		}
		var qs []schema.QueryAppender
		if c := change.NewCycle; c != nil {
			if change.Charge == nil || c.SubscriptionID() != id || c.ChargeID() != change.Charge.ID() {
				return fmt.Errorf("store: cycle %d of %s must come with its own charge", c.Number(), id)
			}
			crow, err := cycleFromDomain(c)
			if err != nil {
				return err
			}
			if err := execBatch(ctx, tx, tx.NewInsert().Model(crow)); err != nil {
				return err
			}
			chrow, err := chargeFromDomain(change.Charge.Snapshot())
			if err != nil {
				return err
			}
			if err := insertCharge(ctx, tx, chargeCreate{row: chrow, evs: eventsFromDomain(change.ChargeEvents)}); err != nil {
				return err
			}
			events = events || len(change.ChargeEvents) > 0
		}
		qs = append(qs, tx.NewUpdate().Model(upd).ExcludeColumn(subscriptionImmutableColumns...).WherePK())
		for _, c := range change.Cycles {
			if c.SubscriptionID() != id {
				return fmt.Errorf("store: cycle %d of %s saved with subscription %s", c.Number(), c.SubscriptionID(), id)
			}
			crow, err := cycleFromDomain(c)
			if err != nil {
				return err
			}
			qs = append(qs, tx.NewUpdate().Model(crow).
				Column("status", "attempts", "check_at", "updated_at").WherePK())
		}
		if evs := eventsFromDomain(change.Events); len(evs) > 0 {
			qs = append(qs, tx.NewInsert().Model(&evs))
			events = true
		}
		return execBatch(ctx, tx, qs...)
	})
	if err = mapError(err); err != nil {
		return err
	}
	if events {
		db.signals.committed(SignalEvents)
	}
	return nil
}

// ListSubscriptions implements ports.SubscriptionStore.
func (db *DB) ListSubscriptions(ctx context.Context, q ports.SubscriptionQuery) ([]*domain.Subscription, bool, error) {
	if q.Limit < 1 || q.Limit > maxListLimit {
		return nil, false, fmt.Errorf("store: list limit %d is outside 1..%d", q.Limit, maxListLimit)
	}
	var rows []subscriptionRow
	sel := whereScope(db.reads().NewSelect().Model(&rows), q.Scope)
	if len(q.Statuses) > 0 {
		sel = sel.Where("sb.status IN (?)", bun.List(q.Statuses))
	}
	if q.StartingAfter != "" {
		cur := new(subscriptionRow)
		err := scopedByID(ctx, db.reads().NewSelect().Model(cur).Column("account_id", "mode", "created_at"), "sb.id", q.StartingAfter,
			q.Scope, &cur.AccountID, &cur.Mode)
		if err != nil {
			return nil, false, err
		}
		sel = sel.Where("(sb.created_at, sb.id) < (?, ?)", cur.CreatedAt, q.StartingAfter)
	}
	if err := sel.OrderExpr("sb.created_at DESC, sb.id DESC").Limit(int64(q.Limit) + 1).Scan(ctx); err != nil {
		return nil, false, mapError(err)
	}
	more := len(rows) > q.Limit
	rows = rows[:min(len(rows), q.Limit)]
	out := make([]*domain.Subscription, len(rows))
	for i := range rows {
		s, err := rows[i].toDomain()
		if err != nil {
			return nil, false, err
		}
		out[i] = s
	}
	return out, more, nil
}

// GetCycle implements ports.SubscriptionStore.
func (db *DB) GetCycle(ctx context.Context, scope ports.Scope, subscriptionID string, k int) (*domain.Cycle, error) {
	row := new(cycleRow)
	err := db.bun.NewSelect().Model(row).Where("sc.subscription_id = ?", subscriptionID).Where("sc.cycle = ?", k).Scan(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	if row.AccountID != scope.AccountID || row.Mode != string(scope.Mode) {
		return nil, ports.ErrNotFound
	}
	return row.toDomain()
}

// ListCycles implements ports.SubscriptionStore.
func (db *DB) ListCycles(ctx context.Context, scope ports.Scope, subscriptionID string) ([]*domain.Cycle, error) {
	var rows []cycleRow
	err := whereScope(db.bun.NewSelect().Model(&rows), scope).Where("sc.subscription_id = ?", subscriptionID).
		OrderExpr("sc.cycle").Scan(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	return cyclesToDomain(rows)
}

// ListSubscriptionCharges implements ports.SubscriptionStore: through the
// unique index on (subscription_id, subscription_cycle), latest cycle
// first.
func (db *DB) ListSubscriptionCharges(ctx context.Context, q ports.SubscriptionChargeQuery) ([]*domain.Charge, bool, error) {
	if q.Limit < 1 || q.Limit > maxListLimit {
		return nil, false, fmt.Errorf("store: list limit %d is outside 1..%d", q.Limit, maxListLimit)
	}
	var rows []chargeRow
	sel := db.reads().NewSelect().Model(&rows).Where("c.subscription_id = ?", q.SubscriptionID)
	if q.StartingAfter != "" {
		cur, err := selectCharge(ctx, db.reads(), &q.Scope, q.StartingAfter, false)
		if err != nil {
			return nil, false, err
		}
		if deref(cur.SubscriptionID) != q.SubscriptionID || cur.SubscriptionCycle == nil {
			return nil, false, ports.ErrNotFound
		}
		sel = sel.Where("c.subscription_cycle < ?", *cur.SubscriptionCycle)
	}
	if err := sel.OrderExpr("c.subscription_cycle DESC").Limit(int64(q.Limit) + 1).Scan(ctx); err != nil {
		return nil, false, mapError(err)
	}
	more := len(rows) > q.Limit
	rows = rows[:min(len(rows), q.Limit)]
	out := make([]*domain.Charge, 0, len(rows))
	for i := range rows {
		if !rows[i].inScope(q.Scope) {
			continue // a subscription is one scope's; never show another's
		}
		c, err := rows[i].toDomain()
		if err != nil {
			return nil, false, err
		}
		out = append(out, c)
	}
	return out, more, nil
}

// ClaimDueSubscriptions implements ports.SubscriptionStore.
func (db *DB) ClaimDueSubscriptions(ctx context.Context, now, leaseUntil time.Time, limit int) ([]ports.SubscriptionRef, error) {
	var rows []subscriptionRow
	err := db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		q := tx.NewSelect().Model(&rows).Column("id", "account_id", "mode").
			Where("sb.status IN ('pending_authorization', 'active')").Where("sb.next_run_at IS NOT NULL").
			Where("sb.next_run_at <= ?", newDBTime(now)).OrderExpr("sb.next_run_at, sb.id").Limit(int64(limit))
		if postgres(tx) {
			q = q.For("UPDATE SKIP LOCKED")
		}
		if err := q.Scan(ctx); err != nil || len(rows) == 0 {
			return err
		}
		ids := make([]string, len(rows))
		for i, r := range rows {
			ids[i] = r.ID
		}
		_, err := tx.NewUpdate().Model((*subscriptionRow)(nil)).Set("next_run_at = ?", newDBTime(leaseUntil)).
			Where("id IN (?)", bun.List(ids)).Exec(ctx)
		return err
	})
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]ports.SubscriptionRef, len(rows))
	for i, r := range rows {
		out[i] = ports.SubscriptionRef{Scope: ports.Scope{AccountID: r.AccountID, Mode: domain.Mode(r.Mode)}, ID: r.ID}
	}
	return out, nil
}

// ClaimDueCycles implements ports.SubscriptionStore.
func (db *DB) ClaimDueCycles(ctx context.Context, now, leaseUntil time.Time, limit int) ([]ports.CycleRef, error) {
	var rows []cycleRow
	err := db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		q := tx.NewSelect().Model(&rows).Column("subscription_id", "cycle", "account_id", "mode").
			Where("sc.check_at IS NOT NULL").
			Where("sc.check_at <= ?", newDBTime(now)).OrderExpr("sc.check_at, sc.subscription_id, sc.cycle").Limit(int64(limit))
		if postgres(tx) {
			q = q.For("UPDATE SKIP LOCKED")
		}
		if err := q.Scan(ctx); err != nil || len(rows) == 0 {
			return err
		}
		var qs []schema.QueryAppender
		for _, r := range rows {
			qs = append(qs, tx.NewUpdate().Model((*cycleRow)(nil)).Set("check_at = ?", newDBTime(leaseUntil)).
				Where("subscription_id = ?", r.SubscriptionID).Where("cycle = ?", r.Cycle))
		}
		return execBatch(ctx, tx, qs...)
	})
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]ports.CycleRef, len(rows))
	for i, r := range rows {
		out[i] = ports.CycleRef{Scope: ports.Scope{AccountID: r.AccountID, Mode: domain.Mode(r.Mode)},
			SubscriptionID: r.SubscriptionID, Cycle: int(r.Cycle)}
	}
	return out, nil
}
