package store

import (
	"context"
	"database/sql"
	"errors"
	"strconv"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/ports"
)

// The charge counters (charge_counts: charges per status; charge_day_totals:
// charges, volume and refunds per day, currency, status and method) are
// kept exact without the write path updating them. Every charge
// change inserts its delta into charge_stat_deltas in its own transaction —
// an append, no row shared with another writer — and FoldChargeStats moves
// the deltas into the totals in one atomic statement. Readers sum totals and
// pending deltas in one statement (one snapshot), so a fold in between
// cannot make them count a change twice or miss it.

// statDeltaRow is one change to the counters: n charges (+1 created or
// moved into the group, -1 moved out) and the volume and confirmed refunds
// they add to their group.
type statDeltaRow struct {
	bun.BaseModel `bun:"table:charge_stat_deltas,alias:sd"`

	AccountID string `bun:"account_id"`
	Mode      string `bun:"mode"`
	Day       string `bun:"day"`
	Currency  string `bun:"currency"`
	Status    string `bun:"status"`
	PaidWith  string `bun:"paid_with"`
	N         int64  `bun:"n"`
	Volume    int64  `bun:"volume"`
	Refunded  int64  `bun:"refunded"`
}

// newChargeDelta is what a new charge adds: itself, in the group of its
// creation day and status.
func newChargeDelta(row *chargeRow) *statDeltaRow {
	k := dayTotalKeyOf(row, row.CreatedAt)
	return &statDeltaRow{AccountID: row.AccountID, Mode: row.Mode, Day: k.day, Currency: k.currency, Status: k.status,
		PaidWith: k.paidWith, N: 1, Volume: row.Amount, Refunded: row.RefundCompleted}
}

// foldLimit bounds the deltas one fold moves, so a backlog drains in
// transactions of bounded size.
const foldLimit = 10000

// foldLockKey is the advisory lock under which one process at a time folds
// on Postgres (folds are correct concurrently, but would only wait on each
// other's rows).
const foldLockKey = 7_131_771_002

// foldPostgresSQL deletes up to foldLimit deltas and adds them, grouped, to
// both totals — one statement, so a reader sees the deltas either pending
// or folded, never both or neither. Folded groups go to shard 0.
var foldPostgresSQL = `WITH d AS (
	DELETE FROM charge_stat_deltas
	WHERE ctid = ANY (ARRAY(SELECT ctid FROM charge_stat_deltas LIMIT ` + strconv.Itoa(foldLimit) + `))
	RETURNING account_id, mode, day, currency, status, paid_with, n, volume, refunded
), g AS (
	SELECT account_id, mode, day, currency, status, paid_with,
		CAST(SUM(n) AS bigint) AS n, CAST(SUM(volume) AS bigint) AS volume, CAST(SUM(refunded) AS bigint) AS refunded
	FROM d GROUP BY account_id, mode, day, currency, status, paid_with
), c AS (
	INSERT INTO charge_counts AS cc (account_id, mode, status, shard, n)
	SELECT account_id, mode, status, 0, CAST(SUM(n) AS bigint) FROM g
	GROUP BY account_id, mode, status HAVING SUM(n) <> 0
	ON CONFLICT (account_id, mode, status, shard) DO UPDATE SET n = cc.n + EXCLUDED.n
), t AS (
	INSERT INTO charge_day_totals AS dt (account_id, mode, day, currency, status, paid_with, shard, n, volume, refunded)
	SELECT account_id, mode, day, currency, status, paid_with, 0, n, volume, refunded FROM g
	WHERE n <> 0 OR volume <> 0 OR refunded <> 0
	ON CONFLICT (account_id, mode, day, currency, status, paid_with, shard) DO UPDATE
	SET n = dt.n + EXCLUDED.n, volume = dt.volume + EXCLUDED.volume, refunded = dt.refunded + EXCLUDED.refunded
)
SELECT count(*) FROM d`

// The SQLite fold, in one transaction: every delta up to the highest id
// read first.
const (
	foldSQLiteCounts = `INSERT INTO charge_counts (account_id, mode, status, shard, n)
	SELECT account_id, mode, status, 0, SUM(n) FROM charge_stat_deltas WHERE id <= ?
	GROUP BY account_id, mode, status HAVING SUM(n) <> 0
	ON CONFLICT (account_id, mode, status, shard) DO UPDATE SET n = n + excluded.n`
	foldSQLiteDays = `INSERT INTO charge_day_totals (account_id, mode, day, currency, status, paid_with, shard, n, volume, refunded)
	SELECT account_id, mode, day, currency, status, paid_with, 0, SUM(n), SUM(volume), SUM(refunded)
	FROM charge_stat_deltas WHERE id <= ?
	GROUP BY account_id, mode, day, currency, status, paid_with
	HAVING SUM(n) <> 0 OR SUM(volume) <> 0 OR SUM(refunded) <> 0
	ON CONFLICT (account_id, mode, day, currency, status, paid_with, shard) DO UPDATE
	SET n = n + excluded.n, volume = volume + excluded.volume, refunded = refunded + excluded.refunded`
)

// FoldChargeStats moves pending counter deltas into the totals and reports
// how many it moved (up to foldLimit a call; quitad's "stats-fold" worker
// calls it when this process commits charge changes and on a slow poll).
// Safe in every process at once; the counts readers see do not change.
func (db *DB) FoldChargeStats(ctx context.Context) (int, error) {
	var n int
	err := db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if db.dialect == DialectPostgres {
			var locked bool
			if err := tx.QueryRowContext(ctx, "SELECT pg_try_advisory_xact_lock(?)", foldLockKey).Scan(&locked); err != nil || !locked {
				return err
			}
			return tx.QueryRowContext(ctx, foldPostgresSQL).Scan(&n)
		}
		var last sql.NullInt64
		if err := tx.QueryRowContext(ctx, "SELECT id FROM charge_stat_deltas ORDER BY id LIMIT 1 OFFSET ?", foldLimit-1).Scan(&last); err != nil {
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			if err := tx.QueryRowContext(ctx, "SELECT max(id) FROM charge_stat_deltas").Scan(&last); err != nil {
				return err
			}
		}
		if !last.Valid {
			return nil
		}
		for _, q := range []string{foldSQLiteCounts, foldSQLiteDays} {
			if _, err := tx.ExecContext(ctx, q, last.Int64); err != nil {
				return err
			}
		}
		res, err := tx.ExecContext(ctx, "DELETE FROM charge_stat_deltas WHERE id <= ?", last.Int64)
		if err != nil {
			return err
		}
		rows, err := res.RowsAffected()
		n = int(rows)
		return err
	})
	return n, mapError(err)
}

// countCharges is the scope's number of charges (of status, when set):
// the counters plus the pending deltas, in one statement.
func (db *DB) countCharges(ctx context.Context, scope ports.Scope, status string) (int64, error) {
	where := "account_id = ? AND mode = ?"
	args := []any{scope.AccountID, string(scope.Mode)}
	if status != "" {
		where += " AND status = ?"
		args = append(args, status)
	}
	args = append(args, args...)
	var n int64
	err := db.bun.NewRaw("SELECT CAST(COALESCE((SELECT SUM(n) FROM charge_counts WHERE "+where+"), 0) + "+
		"COALESCE((SELECT SUM(n) FROM charge_stat_deltas WHERE "+where+"), 0) AS bigint)", args...).Scan(ctx, &n)
	return n, mapError(err)
}
