package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

var _ ports.TransferStore = (*DB)(nil)

// transferRow is a row of the transfers table. Every statement on that
// table is in this file (and verify_transfers.go).
type transferRow struct {
	bun.BaseModel `bun:"table:transfers,alias:tr"`

	ID            string `bun:"id,pk"`
	SourceID      string `bun:"source_account_id"`
	DestinationID string `bun:"destination_account_id"`
	Mode          string `bun:"mode"`
	Amount        int64  `bun:"amount"`
	Currency      string `bun:"currency"`
	Description   string `bun:"description"`
	Metadata      string `bun:"metadata"` // JSON
	CreatedAt     dbTime `bun:"created_at"`
}

func transferFromDomain(t *domain.Transfer) (*transferRow, error) {
	s := t.Snapshot()
	meta := []byte("{}")
	if s.Metadata != nil {
		var err error
		if meta, err = json.Marshal(s.Metadata); err != nil {
			return nil, fmt.Errorf("store: transfer metadata: %w", err)
		}
	}
	return &transferRow{ID: s.ID, SourceID: s.SourceID, DestinationID: s.DestinationID, Mode: string(s.Mode), Amount: s.Amount,
		Currency: string(s.Currency), Description: s.Description, Metadata: string(meta), CreatedAt: newDBTime(s.CreatedAt)}, nil
}

func (r *transferRow) toDomain() (*domain.Transfer, error) {
	var meta map[string]any
	if err := json.Unmarshal([]byte(r.Metadata), &meta); err != nil {
		return nil, fmt.Errorf("store: transfer %s metadata: %w", r.ID, err)
	}
	return domain.UnmarshalTransferFromStorage(domain.TransferSnapshot{ID: r.ID, SourceID: r.SourceID, DestinationID: r.DestinationID,
		Mode: domain.Mode(r.Mode), Amount: r.Amount, Currency: domain.Currency(r.Currency), Description: r.Description,
		Metadata: meta, CreatedAt: r.CreatedAt.Time}), nil
}

// CreateTransfer implements ports.TransferStore: the idempotency record,
// the transfer, its events and its entries in one transaction, as one
// text; the wallets' conditional updates come last (entryStatements), in
// walletLess order, so two transfers between the same wallets in
// opposite directions lock them in the same order.
func (db *DB) CreateTransfer(ctx context.Context, t *domain.Transfer, events []domain.Event, entries []domain.JournalEntry, rec *ports.IdempotencyRecord) error {
	row, err := transferFromDomain(t)
	if err != nil {
		return err
	}
	err = db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var qs []schema.QueryAppender
		if rec != nil {
			qs = append(qs, tx.NewInsert().Model(idempotencyFromPort(rec)))
		}
		qs = append(qs, tx.NewInsert().Model(row))
		if evs := eventsFromDomain(events); len(evs) > 0 {
			qs = append(qs, tx.NewInsert().Model(&evs))
		}
		ledger, err := entryStatements(ctx, tx, entries)
		if err != nil {
			return err
		}
		return execBatch(ctx, tx, append(qs, ledger...)...)
	})
	if err != nil {
		return mapError(err)
	}
	if len(events) > 0 {
		db.signals.committed(SignalEvents)
	}
	return nil
}

// transferInScope selects a transfer sent or received by the scope's
// account in its mode.
func transferInScope(q *bun.SelectQuery, s ports.Scope) *bun.SelectQuery {
	return q.Where("tr.mode = ?", string(s.Mode)).
		WhereGroup(" AND ", func(q *bun.SelectQuery) *bun.SelectQuery {
			return q.Where("tr.source_account_id = ?", s.AccountID).WhereOr("tr.destination_account_id = ?", s.AccountID)
		})
}

// GetTransfer implements ports.TransferStore.
func (db *DB) GetTransfer(ctx context.Context, scope ports.Scope, id string) (*domain.Transfer, error) {
	row := new(transferRow)
	if err := transferInScope(db.bun.NewSelect().Model(row).Where("tr.id = ?", id), scope).Scan(ctx); err != nil {
		return nil, mapError(err)
	}
	return row.toDomain()
}

// ListTransfers implements ports.TransferStore. The page is the newest
// of the account's sent and of its received transfers, each read on its
// own index and merged.
func (db *DB) ListTransfers(ctx context.Context, q ports.TransferQuery) ([]*domain.Transfer, bool, error) {
	if q.Limit < 1 || q.Limit > maxListLimit {
		return nil, false, fmt.Errorf("store: list limit %d is outside 1..%d", q.Limit, maxListLimit)
	}
	var cur *transferRow
	if q.StartingAfter != "" {
		cur = new(transferRow)
		err := transferInScope(db.reads().NewSelect().Model(cur).Column("created_at").Where("tr.id = ?", q.StartingAfter), q.Scope).Scan(ctx)
		if err != nil {
			return nil, false, mapError(err)
		}
	}
	var rows []transferRow
	for _, col := range []string{"tr.source_account_id", "tr.destination_account_id"} {
		var side []transferRow
		sel := db.reads().NewSelect().Model(&side).Where(col+" = ?", q.AccountID).Where("tr.mode = ?", string(q.Mode))
		if cur != nil {
			sel = sel.Where("(tr.created_at, tr.id) < (?, ?)", cur.CreatedAt, q.StartingAfter)
		}
		if err := sel.OrderExpr("tr.created_at DESC, tr.id DESC").Limit(int64(q.Limit) + 1).Scan(ctx); err != nil {
			return nil, false, mapError(err)
		}
		rows = append(rows, side...)
	}
	rows = newestTransfers(rows)
	more := len(rows) > q.Limit
	rows = rows[:min(len(rows), q.Limit)]
	out := make([]*domain.Transfer, len(rows))
	for i := range rows {
		t, err := rows[i].toDomain()
		if err != nil {
			return nil, false, err
		}
		out[i] = t
	}
	return out, more, nil
}

// newestTransfers sorts rows newest first (created_at, then id,
// descending). A transfer is on one side only (source and destination
// differ), so the two sides never hold the same row.
func newestTransfers(rows []transferRow) []transferRow {
	slices.SortFunc(rows, func(a, b transferRow) int {
		if c := b.CreatedAt.Compare(a.CreatedAt.Time); c != 0 {
			return c
		}
		switch {
		case a.ID > b.ID:
			return -1
		case a.ID < b.ID:
			return 1
		}
		return 0
	})
	return rows
}
