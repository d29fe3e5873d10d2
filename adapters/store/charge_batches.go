package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

var _ ports.ChargeBatchStore = (*DB)(nil)

// chargeBatchRow is a row of charge_batches. Every statement on that table
// and on charge_batch_items is in this file.
type chargeBatchRow struct {
	bun.BaseModel `bun:"table:charge_batches,alias:cb"`

	ID           string `bun:"id,pk"`
	AccountID    string `bun:"account_id"`
	Mode         string `bun:"mode"`
	Status       string `bun:"status"`
	Total        int    `bun:"total"`
	Created      int    `bun:"created"`
	Refused      int    `bun:"refused"`
	Pending      int    `bun:"pending"`
	MerchantName string `bun:"merchant_name"`
	MerchantCity string `bun:"merchant_city"`
	Lote         string `bun:"lote"`
	CreatedAt    dbTime `bun:"created_at"`
	CompletedAt  dbTime `bun:"completed_at"`
	LeaseUntil   dbTime `bun:"lease_until"`
}

// chargeBatchItemRow is a row of charge_batch_items.
type chargeBatchItemRow struct {
	bun.BaseModel `bun:"table:charge_batch_items,alias:cbi"`

	BatchID  string  `bun:"batch_id,pk"`
	Idx      int     `bun:"idx,pk"`
	Status   string  `bun:"status"`
	Input    string  `bun:"input"`
	ChargeID string  `bun:"charge_id"`
	Error    *string `bun:"error"` // JSON, NULL unless refused
	Attempts int     `bun:"attempts"`
	TxID     string  `bun:"txid"`
}

// batchInsertChunk bounds the rows of one INSERT of items (bun writes the
// values into the statement's text), so that no statement carries more
// than a few hundred create requests.
const batchInsertChunk = 250

func (r *chargeBatchRow) toPort() *ports.ChargeBatch {
	return &ports.ChargeBatch{
		Scope: ports.Scope{AccountID: r.AccountID, Mode: domain.Mode(r.Mode)}, ID: r.ID,
		Status: domain.BatchStatus(r.Status), Total: r.Total, Created: r.Created, Refused: r.Refused, Pending: r.Pending,
		MerchantName: r.MerchantName, MerchantCity: r.MerchantCity, Lote: r.Lote,
		CreatedAt: r.CreatedAt.Time, CompletedAt: r.CompletedAt.Time,
	}
}

func batchItemFromPort(batchID string, it ports.ChargeBatchItem) (chargeBatchItemRow, error) {
	row := chargeBatchItemRow{BatchID: batchID, Idx: it.Index, Status: string(it.Status), Input: string(it.Input),
		ChargeID: it.ChargeID, Attempts: it.Attempts, TxID: it.TxID}
	if it.Error != nil {
		b, err := json.Marshal(it.Error)
		if err != nil {
			return row, fmt.Errorf("store: batch item error: %w", err)
		}
		s := string(b)
		row.Error = &s
	}
	return row, nil
}

func (r *chargeBatchItemRow) toPort() (ports.ChargeBatchItem, error) {
	it := ports.ChargeBatchItem{Index: r.Idx, Status: domain.BatchItemStatus(r.Status), Input: []byte(r.Input),
		ChargeID: r.ChargeID, Attempts: r.Attempts, TxID: r.TxID}
	if r.Error != nil {
		it.Error = new(ports.ChargeBatchError)
		if err := json.Unmarshal([]byte(*r.Error), it.Error); err != nil {
			return it, fmt.Errorf("store: batch %s item %d error: %w", r.BatchID, r.Idx, err)
		}
	}
	return it, nil
}

// CreateChargeBatch implements ports.ChargeBatchStore.
func (db *DB) CreateChargeBatch(ctx context.Context, b ports.ChargeBatch, items []ports.ChargeBatchItem, rec *ports.IdempotencyRecord, leaseUntil time.Time) error {
	row := &chargeBatchRow{ID: b.ID, AccountID: b.AccountID, Mode: string(b.Mode), Status: string(b.Status), Total: b.Total,
		Created: b.Created, Refused: b.Refused, Pending: b.Pending, MerchantName: b.MerchantName, MerchantCity: b.MerchantCity,
		Lote: b.Lote, CreatedAt: newDBTime(b.CreatedAt), CompletedAt: newDBTime(b.CompletedAt), LeaseUntil: newDBTime(leaseUntil)}
	rows := make([]chargeBatchItemRow, len(items))
	for i, it := range items {
		var err error
		if rows[i], err = batchItemFromPort(b.ID, it); err != nil {
			return err
		}
	}
	return mapError(db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if rec != nil {
			if _, err := tx.NewInsert().Model(idempotencyFromPort(rec)).Exec(ctx); err != nil {
				return err
			}
		}
		if _, err := tx.NewInsert().Model(row).Exec(ctx); err != nil {
			return err
		}
		for lo := 0; lo < len(rows); lo += batchInsertChunk {
			chunk := rows[lo:min(lo+batchInsertChunk, len(rows))]
			if _, err := tx.NewInsert().Model(&chunk).Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	}))
}

// GetChargeBatch implements ports.ChargeBatchStore.
func (db *DB) GetChargeBatch(ctx context.Context, scope ports.Scope, id string) (*ports.ChargeBatch, []ports.ChargeBatchItem, error) {
	row := new(chargeBatchRow)
	if err := db.bun.NewSelect().Model(row).Where("cb.id = ?", id).Scan(ctx); err != nil {
		return nil, nil, mapError(err)
	}
	if row.AccountID != scope.AccountID || row.Mode != string(scope.Mode) {
		return nil, nil, ports.ErrNotFound
	}
	var rows []chargeBatchItemRow
	if err := db.bun.NewSelect().Model(&rows).Where("cbi.batch_id = ?", id).OrderExpr("cbi.idx").Scan(ctx); err != nil {
		return nil, nil, mapError(err)
	}
	items := make([]ports.ChargeBatchItem, len(rows))
	for i := range rows {
		var err error
		if items[i], err = rows[i].toPort(); err != nil {
			return nil, nil, err
		}
	}
	return row.toPort(), items, nil
}

// ClaimChargeBatches implements ports.ChargeBatchStore.
func (db *DB) ClaimChargeBatches(ctx context.Context, now, leaseUntil time.Time, limit int) ([]ports.ChargeBatchRef, error) {
	var rows []chargeBatchRow
	err := db.claimLeases(ctx, (*chargeBatchRow)(nil), leaseUntil, func(tx bun.Tx) (*bun.SelectQuery, func() []string) {
		q := tx.NewSelect().Model(&rows).Column("id", "account_id", "mode").
			Where("cb.status = ?", string(domain.BatchProcessing)).
			Where("(cb.lease_until IS NULL OR cb.lease_until <= ?)", newDBTime(now)).
			OrderExpr("cb.lease_until, cb.id").Limit(int64(limit))
		return q, func() []string {
			ids := make([]string, len(rows))
			for i, r := range rows {
				ids[i] = r.ID
			}
			return ids
		}
	})
	if err != nil {
		return nil, err
	}
	out := make([]ports.ChargeBatchRef, len(rows))
	for i, r := range rows {
		out[i] = ports.ChargeBatchRef{Scope: ports.Scope{AccountID: r.AccountID, Mode: domain.Mode(r.Mode)}, ID: r.ID}
	}
	return out, nil
}

// SaveChargeBatchItems implements ports.ChargeBatchStore. The batch row is
// locked first (FOR UPDATE on Postgres; SQLite's transactions hold the
// write lock), so two processes saving items of one batch count in turn.
func (db *DB) SaveChargeBatchItems(ctx context.Context, ref ports.ChargeBatchRef, items []ports.ChargeBatchItem, lote *string,
	now, leaseUntil time.Time,
) (*ports.ChargeBatch, error) {
	var out *ports.ChargeBatch
	err := db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		row := new(chargeBatchRow)
		q := tx.NewSelect().Model(row).Where("cb.id = ?", ref.ID)
		if postgres(tx) {
			q = q.For("UPDATE")
		}
		if err := q.Scan(ctx); err != nil {
			return err
		}
		if row.AccountID != ref.AccountID || row.Mode != string(ref.Mode) {
			return ports.ErrNotFound
		}
		for _, it := range items {
			r, err := batchItemFromPort(ref.ID, it)
			if err != nil {
				return err
			}
			_, err = tx.NewUpdate().Model(&r).Column("status", "charge_id", "error", "attempts", "txid").
				Where("batch_id = ?", ref.ID).Where("idx = ?", it.Index).
				Where("status = ?", string(domain.BatchItemPending)).Exec(ctx)
			if err != nil {
				return err
			}
		}
		var counts []struct {
			Status string `bun:"status"`
			N      int    `bun:"n"`
		}
		err := tx.NewSelect().Table("charge_batch_items").ColumnExpr("status, count(*) AS n").
			Where("batch_id = ?", ref.ID).GroupExpr("status").Scan(ctx, &counts)
		if err != nil {
			return err
		}
		row.Created, row.Refused, row.Pending = 0, 0, 0
		for _, c := range counts {
			switch domain.BatchItemStatus(c.Status) {
			case domain.BatchItemCreated:
				row.Created = c.N
			case domain.BatchItemRefused:
				row.Refused = c.N
			default:
				row.Pending += c.N
			}
		}
		if row.Pending == 0 && row.Status != string(domain.BatchCompleted) {
			row.Status, row.CompletedAt = string(domain.BatchCompleted), newDBTime(now)
		}
		if lote != nil {
			row.Lote = *lote
		}
		row.LeaseUntil = newDBTime(leaseUntil)
		_, err = tx.NewUpdate().Model(row).
			Column("status", "created", "refused", "pending", "lote", "completed_at", "lease_until").WherePK().Exec(ctx)
		out = row.toPort()
		return err
	})
	if err != nil {
		return nil, mapError(err)
	}
	return out, nil
}

// ChargesByID implements ports.ChargeBatchStore. The charges are read by
// id alone and their scope checked after (chargeRow.inScope says why).
func (db *DB) ChargesByID(ctx context.Context, scope ports.Scope, ids []string) ([]*domain.Charge, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var rows []chargeRow
	if err := db.bun.NewSelect().Model(&rows).Where("c.id IN (?)", bun.List(ids)).Scan(ctx); err != nil {
		return nil, mapError(err)
	}
	out := make([]*domain.Charge, 0, len(rows))
	for i := range rows {
		if !rows[i].inScope(scope) {
			continue
		}
		c, err := rows[i].toDomain()
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}
