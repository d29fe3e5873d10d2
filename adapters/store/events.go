package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// ListEvents implements ports.EventOutbox: the scope's events newest first
// in write order (seq), walked by the index (account_id, mode, seq).
func (db *DB) ListEvents(ctx context.Context, q ports.EventQuery) ([]domain.Event, bool, error) {
	if q.Limit < 1 || q.Limit > maxListLimit {
		return nil, false, fmt.Errorf("store: list limit %d is outside 1..%d", q.Limit, maxListLimit)
	}
	var rows []eventRow
	sel := whereScope(db.bun.NewSelect().Model(&rows), q.Scope)
	if len(q.Types) > 0 {
		sel = sel.Where("e.type IN (?)", bun.List(q.Types))
	}
	if q.CreatedAfter != nil {
		sel = sel.Where("e.created_at >= ?", ceilDBTime(*q.CreatedAfter))
	}
	if q.CreatedBefore != nil {
		sel = sel.Where("e.created_at <= ?", newDBTime(*q.CreatedBefore))
	}
	newer := q.EndingBefore != ""
	if cursor := q.StartingAfter + q.EndingBefore; cursor != "" {
		var seq int64
		err := whereScope(db.bun.NewSelect().Model((*eventRow)(nil)), q.Scope).
			Column("seq").Where("e.id = ?", cursor).Scan(ctx, &seq)
		if err != nil {
			return nil, false, mapError(err)
		}
		if newer {
			sel = sel.Where("e.seq > ?", seq)
		} else {
			sel = sel.Where("e.seq < ?", seq)
		}
	}
	order := "e.seq DESC"
	if newer {
		// The page just after the cursor: the oldest of the newer events,
		// shown newest first like every page.
		order = "e.seq ASC"
	}
	if err := sel.OrderExpr(order).Limit(int64(q.Limit) + 1).Scan(ctx); err != nil {
		return nil, false, mapError(err)
	}
	hasMore := len(rows) > q.Limit
	rows = rows[:min(len(rows), q.Limit)]
	if newer {
		slices.Reverse(rows)
	}
	out := make([]domain.Event, len(rows))
	for i := range rows {
		out[i] = rows[i].toDomain()
	}
	return out, hasMore, nil
}

// GetEvent implements ports.EventOutbox.
func (db *DB) GetEvent(ctx context.Context, scope ports.Scope, id string) (*domain.Event, error) {
	row := new(eventRow)
	if err := scopedByID(ctx, db.bun.NewSelect().Model(row), "e.id", id, scope, &row.AccountID, &row.Mode); err != nil {
		return nil, err
	}
	ev := row.toDomain()
	return &ev, nil
}

// DeleteEventsBefore implements ports.EventOutbox. On Postgres the old
// events are found through a BRIN index on created_at (migration
// 20261127000001), summarised first as DeleteRequestLogsBefore does; any
// limit of them goes, not the oldest limit, which would have to read and
// sort every match. An event still in the outbox stays: on Postgres every
// event from the oldest undispatched one on stays (an outbox row holds a
// statement's seqs, in order), on SQLite each outbox row is one event.
// An event that holds an idempotency record's answer (answers_key) gives
// it back to the record first, in the same transaction, so a replay of
// the key still answers it byte for byte.
func (db *DB) DeleteEventsBefore(ctx context.Context, t time.Time, limit int) (int, error) {
	if postgres(db.bun) {
		_, _ = db.bun.ExecContext(ctx, "SELECT brin_summarize_new_values('charge_events_created_brin')")
	}
	var n int64
	err := db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		q := tx.NewSelect().Model((*eventRow)(nil)).Column("e.seq").
			Where("e.created_at < ?", newDBTime(t)).Limit(int64(limit))
		if postgres(db.bun) {
			q = q.Where("e.seq < (SELECT coalesce(min(o.seqs[1]), 9223372036854775807) FROM event_outbox AS o)")
		} else {
			q = q.Where("NOT EXISTS (SELECT 1 FROM event_outbox AS o WHERE o.seq = e.seq)")
		}
		var seqs []int64
		if err := q.Scan(ctx, &seqs); err != nil || len(seqs) == 0 {
			return err
		}
		if err := returnAnswers(ctx, tx, seqs); err != nil {
			return err
		}
		res, err := tx.NewDelete().Model((*eventRow)(nil)).Where("seq IN (?)", bun.List(seqs)).Exec(ctx)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, mapError(err)
	}
	return int(n), nil
}

// returnAnswers copies the answers that events of seqs hold into the
// idempotency records that name them (pointAnswer), before they go.
func returnAnswers(ctx context.Context, tx bun.Tx, seqs []int64) error {
	var holders []eventRow
	err := tx.NewSelect().Model(&holders).Column("e.id", "e.account_id", "e.mode", "e.answers_key", "e.payload").
		Where("e.seq IN (?)", bun.List(seqs)).Where("e.answers_key IS NOT NULL").Scan(ctx)
	if err != nil {
		return err
	}
	for _, h := range holders {
		answer, err := answerOf(h.Payload)
		if err != nil {
			return err
		}
		_, err = tx.NewUpdate().Model((*idempotencyRow)(nil)).Set("body = ?", answer).Set("body_event = NULL").
			Where("account_id = ?", h.AccountID).Where("mode = ?", h.Mode).Where(`"key" = ?`, *h.AnswersKey).
			Where("body_event = ?", h.ID).Exec(ctx)
		if err != nil {
			return err
		}
	}
	return nil
}
