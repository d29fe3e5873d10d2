package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// chargeTx is ports.ChargeTx inside UpdateCharge's transaction.
type chargeTx struct {
	tx       bun.IDB
	scope    ports.Scope
	chargeID string
}

func (t *chargeTx) Balance(ctx context.Context, cur domain.Currency) (domain.Balance, error) {
	row := &balanceRow{AccountID: t.scope.AccountID, Mode: string(t.scope.Mode), Currency: string(cur)}
	err := t.tx.NewSelect().Model(row).WherePK().Scan(ctx)
	if err != nil && !errors.Is(mapError(err), ports.ErrNotFound) {
		return domain.Balance{}, mapError(err)
	}
	return domain.Balance{Currency: cur, Available: row.Available, Pending: row.Pending}, nil
}

// UpdateCharge runs fn on the locked charge and writes the charge, its
// events, ledger entries (with balances and holds), refunds and
// idempotency record in one transaction. fn's error is returned exactly
// as fn returned it.
func (db *DB) UpdateCharge(ctx context.Context, scope ports.Scope, id string, fn ports.ChargeChangeFunc) error {
	var fnErr error
	err := db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		row, err := selectCharge(ctx, tx, &scope, id, true)
		if err != nil {
			return err
		}
		c, err := row.toDomain()
		if err != nil {
			return err
		}
		change, err := fn(ctx, c, &chargeTx{tx: tx, scope: scope, chargeID: id})
		if err != nil {
			fnErr = err
			return err
		}
		s := c.Snapshot()
		if s.ID != row.ID || s.AccountID != row.AccountID || string(s.Mode) != row.Mode {
			return fmt.Errorf("store: update of charge %s changed its identity", id)
		}
		upd, err := chargeFromDomain(s)
		if err != nil {
			return err
		}
		var qs []schema.QueryAppender
		if change.Idempotency != nil {
			qs = append(qs, tx.NewInsert().Model(idempotencyFromPort(change.Idempotency)))
		}
		qs = append(qs, tx.NewUpdate().Model(upd).ExcludeColumn(chargeImmutableColumns...).WherePK())
		qs = append(qs, statusCountChanges(tx, row.AccountID, row.Mode, row.ID, row.Status, upd.Status)...)
		qs = append(qs, dayTotalsChanges(tx, row, upd)...)
		if evs := eventsFromDomain(change.Events); len(evs) > 0 {
			qs = append(qs, tx.NewInsert().Model(&evs))
		}
		qs = append(qs, refundUpserts(tx, change.Refunds)...)
		// The ledger's statements come last, the wallet updates last of
		// all: the wallet rows are locked only from there to the commit,
		// one round trip later.
		ledger, err := entryStatements(ctx, tx, change.Entries)
		if err != nil {
			return err
		}
		return execBatch(ctx, tx, append(qs, ledger...)...)
	})
	if fnErr != nil {
		return fnErr
	}
	return mapError(err)
}
