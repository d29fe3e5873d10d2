package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
)

// On Postgres the append-only history — charge_events and request_logs —
// is partitioned by month of created_at (UTC), one partition per month
// named <table>_pYYYYMM, plus a DEFAULT partition for a row outside every
// month made so far (migration 20261222000001; docs/decisions.md, "History
// tables are partitioned by month"). The months ahead are made by
// EnsurePartitions; retention drops a month whole once all of it is past
// the cut, and deletes rows only in the month the cut falls in.

// partitionedHistory are the tables partitioned by month.
var partitionedHistory = []string{"charge_events", "request_logs"}

// PartitionMonthsAhead is how many months past the current one
// EnsurePartitions keeps made.
const PartitionMonthsAhead = 3

// EnsurePartitions implements ports.DashboardHousekeeping: on Postgres it
// makes the partitions of the current month and the PartitionMonthsAhead
// after it that are missing (moving any of their rows out of the DEFAULT
// partition), and reports how many it made; on SQLite it does nothing.
func (db *DB) EnsurePartitions(ctx context.Context) (int, error) {
	if !postgres(db.bun) {
		return 0, nil
	}
	made := 0
	for _, t := range partitionedHistory {
		var n int
		if err := db.bun.NewRaw("SELECT quita_month_partitions(?, now(), ?)", t, PartitionMonthsAhead).Scan(ctx, &n); err != nil {
			return made, mapError(err)
		}
		made += n
	}
	return made, nil
}

// monthsBefore lists parent's month partitions whose month ends at or
// before t, oldest first.
func monthsBefore(ctx context.Context, idb bun.IDB, parent string, t time.Time) ([]string, error) {
	var names []string
	err := idb.NewRaw(`SELECT c.relname FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
		WHERE i.inhparent = ?::regclass ORDER BY c.relname`, parent).Scan(ctx, &names)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		month, ok := strings.CutPrefix(n, parent+"_p")
		if !ok {
			continue
		}
		start, err := time.Parse("200601", month)
		if err != nil {
			continue
		}
		if !start.AddDate(0, 1, 0).After(t) {
			out = append(out, n)
		}
	}
	return out, nil
}

// dropMonth drops one month partition in a transaction that waits at most
// 2 s for its lock (a long reader of the table must not hold every writer
// queued behind the drop), after before ran in it; it returns the
// partition's row count as the statistics last estimated it (at least 1).
func (db *DB) dropMonth(ctx context.Context, part string, before func(ctx context.Context, tx bun.Tx) (bool, error)) (int, bool, error) {
	n, dropped := 0, false
	err := db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.ExecContext(ctx, "SET LOCAL lock_timeout = '2s'"); err != nil {
			return err
		}
		if before != nil {
			ok, err := before(ctx, tx)
			if err != nil || !ok {
				return err
			}
		}
		var rows float64
		if err := tx.NewRaw("SELECT reltuples FROM pg_class WHERE oid = ?::regclass", part).Scan(ctx, &rows); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, "DROP TABLE "+quoteIdent(part)); err != nil {
			return err
		}
		n, dropped = max(int(rows), 1), true
		return nil
	})
	return n, dropped, mapError(err)
}

// dropEventMonths drops the months of charge_events wholly before t, oldest
// first, stopping at one that holds an undispatched event. The answers
// its events hold go back to their idempotency records first, 1,000 a
// statement, as the row sweep does.
func (db *DB) dropEventMonths(ctx context.Context, t time.Time) (int, error) {
	parts, err := monthsBefore(ctx, db.bun, "charge_events", t)
	if err != nil {
		return 0, mapError(err)
	}
	total := 0
	for _, part := range parts {
		ident := quoteIdent(part)
		dispatched := func(ctx context.Context, idb bun.IDB) (bool, error) {
			var pending bool
			err := idb.NewRaw(`SELECT EXISTS (SELECT 1 FROM `+ident+` AS e
				WHERE e.seq >= (SELECT coalesce(min(o.seqs[1]), 9223372036854775807) FROM event_outbox AS o))`).Scan(ctx, &pending)
			return !pending, err
		}
		if ok, err := dispatched(ctx, db.bun); err != nil || !ok {
			return total, mapError(err)
		}
		if err := db.returnMonthAnswers(ctx, ident); err != nil {
			return total, err
		}
		n, dropped, err := db.dropMonth(ctx, part, func(ctx context.Context, tx bun.Tx) (bool, error) {
			return dispatched(ctx, tx)
		})
		if err != nil || !dropped {
			return total, err
		}
		total += n
	}
	return total, nil
}

// returnMonthAnswers gives back every answer the events of one month
// partition hold (giveBack), reading the partition alone in seq order,
// 1,000 events a statement. Nothing can come to name an event of a past
// month afterwards: a record names only the event written with it.
func (db *DB) returnMonthAnswers(ctx context.Context, ident string) error {
	last := int64(-1)
	for {
		var holders []eventRow
		err := db.bun.NewSelect().Model(&holders).ModelTableExpr(ident+" AS e").
			Column("e.seq", "e.id", "e.account_id", "e.mode", "e.answers_key", "e.payload").
			Where("e.answers_key IS NOT NULL").Where("e.seq > ?", last).OrderExpr("e.seq").Limit(1000).Scan(ctx)
		if err != nil && err != sql.ErrNoRows {
			return mapError(fmt.Errorf("read the answers of %s: %w", ident, err))
		}
		if len(holders) == 0 {
			return nil
		}
		if err := giveBack(ctx, db.bun, holders); err != nil {
			return mapError(fmt.Errorf("return the answers of %s: %w", ident, err))
		}
		last = holders[len(holders)-1].Seq
	}
}

// dropRequestLogMonths drops the months of request_logs wholly before t.
func (db *DB) dropRequestLogMonths(ctx context.Context, t time.Time) (int, error) {
	parts, err := monthsBefore(ctx, db.bun, "request_logs", t)
	if err != nil {
		return 0, mapError(err)
	}
	total := 0
	for _, part := range parts {
		n, _, err := db.dropMonth(ctx, part, nil)
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}

// quoteIdent quotes a table name read from the catalog for SQL text.
func quoteIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// summarizeBRIN summarises the new block ranges of each partition's part
// of the partitioned BRIN index, so the retention's row sweep reads only
// the old ranges of the cut's month, not the whole month: an
// optimisation only (Postgres lets only the index's owner summarise; a
// role that is not relies on autosummarize).
func (db *DB) summarizeBRIN(ctx context.Context, index string) {
	_, _ = db.bun.ExecContext(ctx, `SELECT brin_summarize_new_values(i.inhrelid) FROM pg_inherits AS i
		WHERE i.inhparent = to_regclass(?)`, index)
}
