package store

import (
	"context"
	"database/sql"
	"slices"

	"github.com/uptrace/bun"
)

// snapshot runs fn in one read-only transaction that sees one consistent
// state without taking a lock writers wait on: REPEATABLE READ on Postgres
// (an MVCC snapshot: writers go on, and nothing they commit meanwhile can
// look like drift). On SQLite it is a read transaction of the verifying
// process (`quitad ledger verify` opens its own connection). `ledger
// verify` reads through it, so it can run against a live database.
func (db *DB) snapshot(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	var opts *sql.TxOptions
	if db.dialect == DialectPostgres {
		opts = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
	}
	return mapError(db.bun.RunInTx(ctx, opts, fn))
}

// verifySet names the rows a partial verify checks again. A nil
// *verifySet is every row; a set's nil-free empty lists are none.
type verifySet struct {
	charges []string // raw charge ids, sorted, each once
	payouts []string // raw payout ids, sorted, each once
	entries []string // ledger entry ids, sorted, each once
}

func (s *verifySet) chargeIDs() []string {
	if s == nil {
		return nil
	}
	return s.charges
}

func (s *verifySet) payoutIDs() []string {
	if s == nil {
		return nil
	}
	return s.payouts
}

func (s *verifySet) entryIDs() []string {
	if s == nil {
		return nil
	}
	return s.entries
}

// VerifyDerived implements ports.PaymentStore: it recomputes from the
// charges and refunds what the write path maintains incrementally — the
// per-status charge counters, the per-day totals, each refund's ledger
// entries (a failed one giving back to available and pending what its
// debit took from each), the hold takes, each split charge's credits,
// each payout's entries (with the payout hold per wallet) and each
// transfer's two entries — in one snapshot, and reports each difference
// naming its account and mode, sorted.
func (db *DB) VerifyDerived(ctx context.Context) ([]string, error) {
	var problems []string
	err := db.snapshot(ctx, func(ctx context.Context, tx bun.Tx) error {
		posted, _, _, err := sumPostings(ctx, tx, 0, 0)
		if err != nil {
			return err
		}
		problems, err = verifyDerived(ctx, tx, nil, posted)
		return err
	})
	slices.Sort(problems)
	return problems, err
}

// verifyDerived is VerifyDerived's checks in tx, of the rows set names
// (every row when nil): for a set, the counters of the days and scopes
// of its charges (verifyCounterDays), the refund, money and split checks
// of its charges, the hold takes of its entries and the entries of its
// payouts. The checks of whole wallets — payout holds, split advances —
// run in full either way, from posted, the sums of every posting of the
// snapshot.
func verifyDerived(ctx context.Context, tx bun.Tx, set *verifySet, posted postingSums) ([]string, error) {
	var problems []string
	checks := []func() ([]string, error){
		func() ([]string, error) {
			if set == nil {
				return verifyCounters(ctx, tx)
			}
			return verifyCounterDays(ctx, tx, set.charges)
		},
		func() ([]string, error) { return verifyRefundEntries(ctx, tx, set.chargeIDs()) },
		func() ([]string, error) { return verifyRefundFailedSplits(ctx, tx, set.chargeIDs()) },
		func() ([]string, error) { return verifyHoldTakes(ctx, tx, set.entryIDs()) },
		func() ([]string, error) { return verifyChargeMoney(ctx, tx, set.chargeIDs()) },
		func() ([]string, error) { return verifySplits(ctx, tx, set.chargeIDs()) },
		func() ([]string, error) { return verifyAdvances(ctx, tx, posted) },
		func() ([]string, error) { return verifyPayoutEntries(ctx, tx, set.payoutIDs()) },
		func() ([]string, error) { return verifyPayoutHolds(ctx, tx, posted) },
		// Transfers are few beside charges: every run reads them all.
		func() ([]string, error) { return verifyTransfers(ctx, tx) },
	}
	for _, check := range checks {
		more, err := check()
		problems = append(problems, more...)
		if err != nil {
			return problems, err
		}
	}
	return problems, nil
}
