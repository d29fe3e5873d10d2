package store

import (
	"context"
	"errors"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/ports"
)

// chargePath is how a store writes a create and reads what every create
// reads. Open picks one per database: sqlCharges (bun, both dialects;
// SQLite's) or pgCharges (adapters/store/pgfast, Postgres's). Every other
// statement goes through bun on either.
type chargePath interface {
	// insertCharge writes c atomically (CreateCharge).
	insertCharge(ctx context.Context, c chargeCreate) error
	// chargeByID reads a charge by its id alone; the caller checks its
	// scope (chargeRow.inScope).
	chargeByID(ctx context.Context, id string) (*chargeRow, error)
	// idempotencyRecord reads a key's record, its answer resolved.
	idempotencyRecord(ctx context.Context, key ports.IdempotencyKey) (*ports.IdempotencyRecord, error)
	// recordIntent records a cob intent (RecordProviderIntent).
	recordIntent(ctx context.Context, in ports.ProviderIntent) error
	// recordOrIntent is IdempotencyRecordOrIntent.
	recordOrIntent(ctx context.Context, in ports.ProviderIntent) (*ports.IdempotencyRecord, error)
	// flights is what the create batches did so far (zero when creates
	// are not batched).
	flights() ports.FlightStats
	close()
}

// sqlCharges is the chargePath of bun's interpolated SQL: each create in
// its own transaction.
type sqlCharges struct{ bun *bun.DB }

var _ chargePath = sqlCharges{}

func (p sqlCharges) insertCharge(ctx context.Context, c chargeCreate) error {
	return mapError(p.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		return insertCharge(ctx, tx, c)
	}))
}

func (p sqlCharges) chargeByID(ctx context.Context, id string) (*chargeRow, error) {
	return selectCharge(ctx, p.bun, nil, id, false)
}

func (p sqlCharges) idempotencyRecord(ctx context.Context, key ports.IdempotencyKey) (*ports.IdempotencyRecord, error) {
	row := &idempotencyRow{AccountID: key.AccountID, Mode: string(key.Mode), Key: key.Key}
	err := p.bun.NewSelect().Model(row).ExcludeColumn("body").ColumnExpr(answerColumns).
		Where("i.account_id = ?", key.AccountID).Where("i.mode = ?", string(key.Mode)).Where(`i."key" = ?`, key.Key).
		Scan(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	if err := row.resolve(); err != nil {
		return nil, err
	}
	return row.toPort(), nil
}

func (p sqlCharges) recordIntent(ctx context.Context, in ports.ProviderIntent) error {
	_, err := p.bun.NewInsert().Model(&providerIntentRow{AccountID: in.Key.AccountID, Mode: string(in.Key.Mode),
		IdemKey: in.Key.Key, TxID: in.TxID, CreatedAt: newDBTime(in.CreatedAt)}).
		On("CONFLICT (account_id, mode, idem_key) DO NOTHING").Exec(ctx)
	return mapError(err)
}

func (p sqlCharges) recordOrIntent(ctx context.Context, in ports.ProviderIntent) (*ports.IdempotencyRecord, error) {
	rec, err := p.idempotencyRecord(ctx, in.Key)
	if !errors.Is(err, ports.ErrNotFound) {
		return rec, err
	}
	if err := p.recordIntent(ctx, in); err != nil {
		return nil, err
	}
	return nil, ports.ErrNotFound
}

func (sqlCharges) flights() ports.FlightStats { return ports.FlightStats{} }

func (sqlCharges) close() {}
