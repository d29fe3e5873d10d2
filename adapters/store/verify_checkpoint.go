package store

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/ports"
)

// checkpointRow is the one row of ledger_verify_checkpoint (migration
// 20261224000002): how far the last ledger verify that saved it read.
// Every posting with an id at or below PostingsThrough, and every event
// with a seq at or below EventsThrough, had committed or rolled back when
// it was taken; ledger_verify_sums holds those postings' sums. Rewrites
// is the ledger_rewrites count it saw.
type checkpointRow struct {
	bun.BaseModel `bun:"table:ledger_verify_checkpoint,alias:vc"`

	ID              int    `bun:"id,pk"`
	Version         int64  `bun:"version"`
	PostingsThrough int64  `bun:"postings_through"`
	EventsThrough   int64  `bun:"events_through"`
	Rewrites        int64  `bun:"rewrites"`
	VerifiedAt      dbTime `bun:"verified_at"`
	FullAt          dbTime `bun:"full_at"`
}

// verifySumRow is one row of ledger_verify_sums.
type verifySumRow struct {
	bun.BaseModel `bun:"table:ledger_verify_sums,alias:vs"`

	AccountID     string `bun:"account_id,pk"`
	Mode          string `bun:"mode,pk"`
	Currency      string `bun:"currency,pk"`
	LedgerAccount string `bun:"ledger_account,pk"`
	Amount        int64  `bun:"amount"`
}

// ledgerHorizon is as far as a verify may move the checkpoint: the last
// posting id and event seq such that every posting and event at or below
// them had committed or rolled back when the verify's snapshot was
// taken. Unsettled: transactions open when the verify started were still
// open after settleWait, and the checkpoint stays where it was.
type ledgerHorizon struct {
	postings, events int64
	settled          bool
}

// settleWait bounds how long a verify waits for the transactions open
// when it starts to end.
var settleWait = 30 * time.Second

// settledHorizon (Postgres) reads the last posting id and event seq
// committed now, then waits until every transaction that had an xid at
// that moment has ended. Ids and seqs are drawn in insert order but
// committed in any order, so one at or below those could still be
// uncommitted then; but a writer draws them after its transaction has
// its xid (it has written a row first: an entry before its postings, a
// charge, payout or idempotency record before its events), so such a
// posting or event belongs to one of those transactions. Once they have
// ended, each is committed or never will be, and a snapshot taken after
// sees every one that is. The statement takes an xid of its own, x:
// every transaction given one before has a smaller one, and they have
// all ended once the oldest running xid is above x. The wait blocks
// nobody (it polls that xid).
func (db *DB) settledHorizon(ctx context.Context) (ledgerHorizon, error) {
	var h ledgerHorizon
	var x int64
	err := db.bun.NewRaw(`SELECT COALESCE((SELECT max(id) FROM ledger_postings), 0),
		COALESCE((SELECT max(seq) FROM charge_events), 0),
		pg_current_xact_id()::text::bigint`).Scan(ctx, &h.postings, &h.events, &x)
	if err != nil {
		return h, mapError(err)
	}
	deadline := time.Now().Add(settleWait)
	for {
		var xmin int64
		if err := db.bun.NewRaw("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint").Scan(ctx, &xmin); err != nil {
			return h, mapError(err)
		}
		if xmin > x {
			h.settled = true
			return h, nil
		}
		if time.Now().After(deadline) {
			return h, nil
		}
		select {
		case <-ctx.Done():
			return h, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// sqliteHorizon is the last posting id and event seq of tx's snapshot:
// SQLite writers run one at a time and draw ids above every committed
// one, so all below are committed.
func sqliteHorizon(ctx context.Context, tx bun.Tx) (ledgerHorizon, error) {
	h := ledgerHorizon{settled: true}
	err := tx.NewRaw(`SELECT COALESCE((SELECT max(id) FROM ledger_postings), 0),
		COALESCE((SELECT max(seq) FROM charge_events), 0)`).Scan(ctx, &h.postings, &h.events)
	return h, mapError(err)
}

// loadCheckpoint reads the checkpoint and the ledger_rewrites count in
// tx; nil when no verify has saved one.
func loadCheckpoint(ctx context.Context, tx bun.Tx) (*checkpointRow, int64, error) {
	var rewrites int64
	if err := tx.NewRaw("SELECT n FROM ledger_rewrites WHERE id = 1").Scan(ctx, &rewrites); err != nil {
		return nil, 0, mapError(err)
	}
	cp := new(checkpointRow)
	err := tx.NewSelect().Model(cp).Where("vc.id = 1").Scan(ctx)
	if errors.Is(mapError(err), ports.ErrNotFound) {
		return nil, rewrites, nil
	}
	return cp, rewrites, mapError(err)
}

// loadSums reads ledger_verify_sums in tx.
func loadSums(ctx context.Context, tx bun.Tx) (postingSums, error) {
	var rows []verifySumRow
	if err := tx.NewSelect().Model(&rows).Scan(ctx); err != nil {
		return nil, mapError(err)
	}
	out := make(postingSums, len(rows))
	for _, r := range rows {
		out[sumKey{r.AccountID, r.Mode, r.Currency, r.LedgerAccount}] = r.Amount
	}
	return out, nil
}

// errCheckpointMoved: another verify saved the checkpoint meanwhile.
var errCheckpointMoved = errors.New("store: the ledger verify checkpoint moved")

// saveCheckpoint writes next over prev (nil: none yet) in one
// transaction, only if prev is still the checkpoint, with sums: the
// whole ledger_verify_sums when replace, else added to it. It reports
// whether it wrote.
func (db *DB) saveCheckpoint(ctx context.Context, prev *checkpointRow, next checkpointRow, sums postingSums, replace bool) (bool, error) {
	err := db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		next.ID = 1
		var res interface{ RowsAffected() (int64, error) }
		var err error
		if prev == nil {
			next.Version = 1
			res, err = tx.NewInsert().Model(&next).On("CONFLICT (id) DO NOTHING").Exec(ctx)
		} else {
			next.Version = prev.Version + 1
			res, err = tx.NewUpdate().Model(&next).WherePK().Where("vc.version = ?", prev.Version).Exec(ctx)
		}
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return errCheckpointMoved
		}
		if replace {
			if _, err := tx.NewDelete().Model((*verifySumRow)(nil)).Where("1 = 1").Exec(ctx); err != nil {
				return err
			}
		}
		rows := make([]verifySumRow, 0, len(sums))
		for k, v := range sums {
			if v != 0 || replace {
				rows = append(rows, verifySumRow{AccountID: k.account, Mode: k.mode, Currency: k.currency, LedgerAccount: k.ledgerAccount, Amount: v})
			}
		}
		for i := 0; i < len(rows); i += verifyChunk {
			chunk := rows[i:min(i+verifyChunk, len(rows))]
			if _, err := tx.NewInsert().Model(&chunk).On("CONFLICT (account_id, mode, currency, ledger_account) DO UPDATE").
				Set("amount = vs.amount + EXCLUDED.amount").Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errCheckpointMoved) {
		return false, nil
	}
	return err == nil, mapError(err)
}
