package store

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// sumKey is one account of the ledger for one merchant: a row of
// ledger_verify_sums.
type sumKey struct{ account, mode, currency, ledgerAccount string }

// postingSums maps each sumKey to the sum of its postings.
type postingSums map[sumKey]int64

// add adds o to s.
func (s postingSums) add(o postingSums) {
	for k, v := range o {
		s[k] += v
	}
}

// wallets is the merchant wallets s gives (available, pending, owed).
func (s postingSums) wallets() map[domain.WalletKey]domain.Balance {
	out := map[domain.WalletKey]domain.Balance{}
	for k, v := range s {
		a := domain.LedgerAccount(k.ledgerAccount)
		if !domain.WalletAccount(a) {
			continue
		}
		w := domain.WalletKey{AccountID: k.account, Mode: domain.Mode(k.mode), Currency: domain.Currency(k.currency)}
		b := out[w]
		b.Currency = w.Currency
		b.Apply(domain.Posting{Account: a, Amount: v})
		out[w] = b
	}
	return out
}

// of sums s's accounts named a, per merchant, mode and currency.
func (s postingSums) of(a domain.LedgerAccount) map[domain.WalletKey]int64 {
	out := map[domain.WalletKey]int64{}
	for k, v := range s {
		if k.ledgerAccount == string(a) {
			out[domain.WalletKey{AccountID: k.account, Mode: domain.Mode(k.mode), Currency: domain.Currency(k.currency)}] += v
		}
	}
	return out
}

// sumPostings sums the postings of tx's snapshot with an id above after,
// per sumKey: all of them (posted), and those at or below through.
func sumPostings(ctx context.Context, tx bun.IDB, after, through int64) (posted, upTo postingSums, n int64, err error) {
	var rows []struct {
		AccountID     string `bun:"account_id"`
		Mode          string `bun:"mode"`
		Currency      string `bun:"currency"`
		LedgerAccount string `bun:"ledger_account"`
		Total         int64  `bun:"total"`
		UpTo          int64  `bun:"up_to"`
		N             int64  `bun:"n"`
	}
	q := tx.NewSelect().Model((*postingRow)(nil)).
		ColumnExpr("lp.account_id, lp.mode, lp.currency, lp.ledger_account, SUM(lp.amount) AS total").
		ColumnExpr("SUM(CASE WHEN lp.id <= ? THEN lp.amount ELSE 0 END) AS up_to, count(*) AS n", through).
		GroupExpr("lp.account_id, lp.mode, lp.currency, lp.ledger_account")
	if after > 0 {
		q = q.Where("lp.id > ?", after)
	}
	if err := q.Scan(ctx, &rows); err != nil {
		return nil, nil, 0, mapError(err)
	}
	posted, upTo = postingSums{}, postingSums{}
	for _, r := range rows {
		k := sumKey{r.AccountID, r.Mode, r.Currency, r.LedgerAccount}
		posted[k], upTo[k] = r.Total, r.UpTo
		n += r.N
	}
	return posted, upTo, n, nil
}

// LedgerTotals sums the postings, balances and holds of every wallet.
func (db *DB) LedgerTotals(ctx context.Context) (ports.LedgerTotals, error) {
	var t ports.LedgerTotals
	err := db.snapshot(ctx, func(ctx context.Context, tx bun.Tx) error {
		posted, _, _, err := sumPostings(ctx, tx, 0, 0)
		if err != nil {
			return err
		}
		if t, err = walletTotals(ctx, tx, posted); err != nil {
			return err
		}
		t.Unbalanced, err = unbalancedEntries(ctx, tx, nil)
		return err
	})
	return t, err
}

// walletTotals is LedgerTotals but the unbalanced entries, with the
// wallets posted gives: the stored balances and the open holds of every
// wallet, read in tx.
func walletTotals(ctx context.Context, tx bun.IDB, posted postingSums) (ports.LedgerTotals, error) {
	t := ports.LedgerTotals{Posted: posted.wallets(), Stored: map[domain.WalletKey]domain.Balance{},
		Held: map[domain.WalletKey]int64{}}
	var bals []balanceRow
	if err := tx.NewSelect().Model(&bals).Scan(ctx); err != nil {
		return t, mapError(err)
	}
	for _, b := range bals {
		k := domain.WalletKey{AccountID: b.AccountID, Mode: domain.Mode(b.Mode), Currency: domain.Currency(b.Currency)}
		t.Stored[k] = domain.Balance{Currency: k.Currency, Available: b.Available, Pending: b.Pending, Owed: b.Owed}
	}
	var held []struct {
		AccountID string `bun:"account_id"`
		Mode      string `bun:"mode"`
		Currency  string `bun:"currency"`
		Sum       int64  `bun:"total"`
	}
	err := tx.NewSelect().Model((*holdRow)(nil)).ColumnExpr("account_id, mode, currency, SUM(amount) AS total").
		GroupExpr("account_id, mode, currency").Scan(ctx, &held)
	if err != nil {
		return t, mapError(err)
	}
	for _, h := range held {
		t.Held[domain.WalletKey{AccountID: h.AccountID, Mode: domain.Mode(h.Mode), Currency: domain.Currency(h.Currency)}] = h.Sum
	}
	return t, nil
}

// unbalancedEntries names each entry whose postings do not sum to zero in
// a currency: of the entries named (all of their postings), or of every
// entry when entries is nil.
func unbalancedEntries(ctx context.Context, tx bun.IDB, entries []string) ([]string, error) {
	var out []string
	err := inChunks(entries, func(chunk []string) error {
		var rows []struct {
			EntryID  string `bun:"entry_id"`
			Currency string `bun:"currency"`
			Sum      int64  `bun:"total"`
		}
		err := whereIn(tx.NewSelect().Model((*postingRow)(nil)), "lp.entry_id", chunk).
			ColumnExpr("lp.entry_id, lp.currency, SUM(lp.amount) AS total").
			GroupExpr("lp.entry_id, lp.currency").Having("SUM(lp.amount) <> 0").Scan(ctx, &rows)
		for _, u := range rows {
			out = append(out, fmt.Sprintf("entry %s does not balance in %s (%d)", u.EntryID, u.Currency, u.Sum))
		}
		return mapError(err)
	})
	return out, err
}

// verifyChunk is how many ids one statement of a partial verify names.
const verifyChunk = 500

// inChunks calls fn with ids in chunks of verifyChunk, or once with nil
// (meaning every row) when ids is nil; an empty ids calls it never.
func inChunks(ids []string, fn func(chunk []string) error) error {
	if ids == nil {
		return fn(nil)
	}
	for i := 0; i < len(ids); i += verifyChunk {
		if err := fn(ids[i:min(i+verifyChunk, len(ids))]); err != nil {
			return err
		}
	}
	return nil
}

// whereIn keeps the rows whose col is in chunk; a nil chunk keeps all.
func whereIn(q *bun.SelectQuery, col string, chunk []string) *bun.SelectQuery {
	if chunk == nil {
		return q
	}
	return q.Where("? IN (?)", bun.Safe(col), bun.List(chunk))
}
