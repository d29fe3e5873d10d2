package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quitapix/quita/internal/groupcommit"
	"github.com/quitapix/quita/ports"
)

// intentInsertAsync is the intent's INSERT on Postgres, committed without
// waiting for a WAL flush (synchronous_commit off for this one
// transaction) into provider_intents, an UNLOGGED table (docs/decisions.md,
// "The database's cob intents are committed asynchronously, in an unlogged
// table"): the intent's row, its index entries and its deletion write no
// WAL. quitad dying cannot lose it — the server has it — but a crash of
// Postgres empties the table on recovery, and a promoted standby starts
// with it empty (unlogged tables are not replicated). Every create in
// flight at that moment may then leave a cob the sweep does not cancel:
// an unpaid cob nobody was shown, which expires at the PSP. The create
// waits for one WAL flush, its batch's, instead of two.
const intentInsertAsync = `WITH async AS (SELECT set_config('synchronous_commit', 'off', true))
INSERT INTO provider_intents (account_id, mode, idem_key, txid, created_at)
SELECT $1, $2, $3, $4, $5 FROM async
ON CONFLICT (account_id, mode, idem_key) DO NOTHING`

// settleIntentSQL deletes a key's intent in the transaction that commits
// the key's idempotency record (and so its charge): a committed create has
// no orphan to look for, so the sweep sees only the intents of creates
// that never committed, however many creates a merchant makes. Only the
// intent of the committed charge's own txid goes: an earlier attempt of
// the key may have opened another cob (a create that skipped the replay
// check asks for a txid of its own, ports.CobIntents), and that one is
// still the sweep's. $4 is the charge's txid, or NULL for a charge without
// a cob (nothing of the key's is left to cancel then).
const settleIntentSQL = `DELETE FROM provider_intents WHERE account_id = $1 AND mode = $2 AND idem_key = $3
AND ($4::text IS NULL OR txid = $4)`

func (p *pgCharges) recordIntent(ctx context.Context, in ports.ProviderIntent) error {
	conn, err := p.pool.Acquire(ctx)
	if err != nil {
		return mapError(err)
	}
	defer conn.Release()
	_, err = conn.Exec(ctx, intentInsertAsync, in.Key.AccountID, string(in.Key.Mode), in.Key.Key, in.TxID,
		in.CreatedAt.UTC().Truncate(time.Microsecond))
	return mapError(err)
}

// recordOrIntentSQL is IdempotencyRecordOrIntent on Postgres: the key's
// record if any, and otherwise the intent's INSERT, committed without
// waiting for its WAL flush like intentInsertAsync — one statement.
const recordOrIntentSQL = `WITH async AS (SELECT set_config('synchronous_commit', 'off', true)),
rec AS (SELECT fingerprint, resource_id, status_code, ` + answerColumns + `, created_at
	FROM idempotency_records WHERE account_id = $1 AND mode = $2 AND "key" = $3),
ins AS (INSERT INTO provider_intents (account_id, mode, idem_key, txid, created_at)
	SELECT $1, $2, $3, $4, $5 FROM async WHERE NOT EXISTS (SELECT 1 FROM rec)
	ON CONFLICT (account_id, mode, idem_key) DO NOTHING)
SELECT fingerprint, resource_id, status_code, body, in_event, created_at FROM rec`

// recordOrIntent runs in the next batch of replay checks.
func (p *pgCharges) recordOrIntent(ctx context.Context, in ports.ProviderIntent) (*ports.IdempotencyRecord, error) {
	return p.replayChecks.Do(ctx, in)
}

// recordOrIntentsSQL is recordOrIntentSQL for many keys in one statement:
// the keys are arrays, each looked up by primary key (a LATERAL probe with
// LIMIT 1 cannot become a hash join over the whole table, whatever the
// statistics say), and the intents of those without a record inserted.
// Rows come back numbered by their key's place in the arrays. One
// statement instead of one per key sends one Bind/Execute and one result
// per batch instead of per key; Postgres's work per key is the same (the
// probe and the intent's row).
const recordOrIntentsSQL = `WITH async AS (SELECT set_config('synchronous_commit', 'off', true)),
k AS (SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[])
	WITH ORDINALITY AS k(account_id, mode, idem_key, txid, created_at, i)),
rec AS (SELECT k.i, r.fingerprint, r.resource_id, r.status_code, r.body, r.in_event, r.created_at
	FROM k CROSS JOIN LATERAL (SELECT fingerprint, resource_id, status_code, ` + answerColumns + `, created_at
		FROM idempotency_records AS ir
		WHERE ir.account_id = k.account_id AND ir.mode = k.mode AND ir."key" = k.idem_key LIMIT 1) AS r),
ins AS (INSERT INTO provider_intents (account_id, mode, idem_key, txid, created_at)
	SELECT k.account_id, k.mode, k.idem_key, k.txid, k.created_at FROM k, async
	WHERE NOT EXISTS (SELECT 1 FROM rec WHERE rec.i = k.i)
	ON CONFLICT (account_id, mode, idem_key) DO NOTHING)
SELECT i, fingerprint, resource_id, status_code, body, in_event, created_at FROM rec`

// checkReplays runs the replay checks of ins as one batch: one round trip, one transaction committed without waiting for
// its WAL flush. Each key's answer is its result: its record, or
// ErrNotFound with the intent recorded. Concurrent creates share a batch
// (p.replayChecks).
func (p *pgCharges) checkReplays(ctx context.Context, ins []ports.ProviderIntent, results []groupcommit.Result[*ports.IdempotencyRecord]) error {
	return mapError(p.pool.Run(ctx, func(conn *pgx.Conn) error { return sendReplayChecks(ctx, conn, ins, results) }))
}

// sendReplayChecks sends the keys of ins as one statement on conn
// (recordOrIntentsSQL) and reads each one's answer into results.
func sendReplayChecks(ctx context.Context, conn *pgx.Conn, ins []ports.ProviderIntent, results []groupcommit.Result[*ports.IdempotencyRecord]) error {
	var (
		accounts = make([]string, len(ins))
		modes    = make([]string, len(ins))
		keys     = make([]string, len(ins))
		txids    = make([]string, len(ins))
		times    = make([]time.Time, len(ins))
	)
	for i, in := range ins {
		accounts[i], modes[i], keys[i], txids[i] = in.Key.AccountID, string(in.Key.Mode), in.Key.Key, in.TxID
		times[i] = in.CreatedAt.UTC().Truncate(time.Microsecond)
		results[i] = groupcommit.Result[*ports.IdempotencyRecord]{Err: ports.ErrNotFound} // unless a record comes back
	}
	rows, err := conn.Query(ctx, recordOrIntentsSQL, accounts, modes, keys, txids, times)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var i int
		row := &idempotencyRow{}
		var created time.Time
		if err := rows.Scan(&i, &row.Fingerprint, &row.ResourceID, &row.StatusCode, &row.Body, &row.InEvent, &created); err != nil {
			return err
		}
		if i < 1 || i > len(ins) {
			return fmt.Errorf("store: replay check answered for key %d of %d", i, len(ins))
		}
		in := ins[i-1]
		row.AccountID, row.Mode, row.Key = in.Key.AccountID, string(in.Key.Mode), in.Key.Key
		row.CreatedAt = newDBTime(created)
		if err := row.resolve(); err != nil {
			results[i-1] = groupcommit.Result[*ports.IdempotencyRecord]{Err: err} // this key's alone
			continue
		}
		results[i-1] = groupcommit.Result[*ports.IdempotencyRecord]{Value: row.toPort()}
	}
	// Err reports the commit too: an answer is only good once it is done.
	return rows.Err()
}

// checkReplay is one replay check alone (recordOrIntentSQL): the key's
// record, or ErrNotFound with the intent recorded.
func (p *pgCharges) checkReplay(ctx context.Context, in ports.ProviderIntent) (*ports.IdempotencyRecord, error) {
	row := &idempotencyRow{AccountID: in.Key.AccountID, Mode: string(in.Key.Mode), Key: in.Key.Key}
	var created time.Time
	err := mapError(p.pool.Run(ctx, func(conn *pgx.Conn) error {
		return conn.QueryRow(ctx, recordOrIntentSQL, in.Key.AccountID, string(in.Key.Mode), in.Key.Key, in.TxID,
			in.CreatedAt.UTC().Truncate(time.Microsecond)).
			Scan(&row.Fingerprint, &row.ResourceID, &row.StatusCode, &row.Body, &row.InEvent, &created)
	}))
	if err != nil {
		return nil, err // ErrNotFound: no record, the intent recorded
	}
	row.CreatedAt = newDBTime(created)
	if err := row.resolve(); err != nil {
		return nil, err
	}
	return row.toPort(), nil
}
