package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

type entryRow struct {
	bun.BaseModel `bun:"table:ledger_entries,alias:le"`

	ID        string `bun:"id,pk"`
	AccountID string `bun:"account_id"`
	Mode      string `bun:"mode"`
	ChargeID  string `bun:"charge_id"`
	RefundID  string `bun:"refund_id"`
	PayoutID  string `bun:"payout_id"`
	// TransferID: see migration 20261223000001_transfers.
	TransferID string `bun:"transfer_id"`
	Kind       string `bun:"kind"`
	CreatedAt  dbTime `bun:"created_at"`
}

type postingRow struct {
	bun.BaseModel `bun:"table:ledger_postings,alias:lp"`

	ID            int64  `bun:"id,pk,autoincrement"`
	EntryID       string `bun:"entry_id"`
	AccountID     string `bun:"account_id"`
	Mode          string `bun:"mode"`
	Currency      string `bun:"currency"`
	LedgerAccount string `bun:"ledger_account"`
	Amount        int64  `bun:"amount"`
}

type balanceRow struct {
	bun.BaseModel `bun:"table:wallet_balances,alias:wb"`

	AccountID string `bun:"account_id,pk"`
	Mode      string `bun:"mode,pk"`
	Currency  string `bun:"currency,pk"`
	Available int64  `bun:"available"`
	Pending   int64  `bun:"pending"`
	Owed      int64  `bun:"owed"`
	UpdatedAt dbTime `bun:"updated_at"`
}

type holdRow struct {
	bun.BaseModel `bun:"table:ledger_holds,alias:lh"`

	ID        int64  `bun:"id,pk,autoincrement"`
	AccountID string `bun:"account_id"`
	Mode      string `bun:"mode"`
	Currency  string `bun:"currency"`
	ChargeID  string `bun:"charge_id"`
	Amount    int64  `bun:"amount"`
	ReleaseAt dbTime `bun:"release_at"`
}

// applyEntries writes entries and applies them to the wallets: a credit to
// pending opens a hold until its ReleaseAt; a debit of pending (other than
// a release, which deletes its hold itself) consumes the holds that would
// be released last and records what it took of each (ledger_hold_takes),
// so the debit can be given back hold by hold. A wallet that would go
// negative fails the whole transaction with domain.ErrInsufficientBalance.
func applyEntries(ctx context.Context, tx bun.IDB, entries []domain.JournalEntry) error {
	qs, err := entryStatements(ctx, tx, entries)
	if err != nil || len(qs) == 0 {
		return err
	}
	return execBatch(ctx, tx, qs...)
}

// entryStatements is applyEntries without running the final statements:
// the writes of entries, postings, holds, hold takes, and the wallet
// updates last.
func entryStatements(ctx context.Context, tx bun.IDB, entries []domain.JournalEntry) ([]schema.QueryAppender, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	var (
		ers    []entryRow
		ps     []postingRow
		holds  []holdRow
		takes  []holdTakeRow
		deltas = map[domain.WalletKey]*domain.Balance{}
		keys   []domain.WalletKey
	)
	for _, e := range entries {
		if err := e.Validate(); err != nil {
			return nil, err
		}
		ers = append(ers, entryRow{ID: e.ID, AccountID: e.AccountID, Mode: string(e.Mode), ChargeID: e.ChargeID,
			RefundID: e.RefundID, PayoutID: e.PayoutID, TransferID: e.TransferID, Kind: string(e.Kind), CreatedAt: newDBTime(e.CreatedAt)})
		for _, p := range e.Postings {
			ps = append(ps, postingRow{EntryID: e.ID, AccountID: e.AccountID, Mode: string(e.Mode), Currency: string(p.Currency),
				LedgerAccount: string(p.Account), Amount: p.Amount})
			if !domain.WalletAccount(p.Account) {
				continue
			}
			k := domain.WalletKey{AccountID: e.AccountID, Mode: e.Mode, Currency: p.Currency}
			d := deltas[k]
			if d == nil {
				d = &domain.Balance{}
				deltas[k] = d
				keys = append(keys, k)
			}
			d.Apply(p)
			if p.Account != domain.LedgerPending {
				continue
			}
			switch {
			case p.Amount > 0:
				if p.ReleaseAt.IsZero() {
					return nil, fmt.Errorf("store: pending credit in entry %s without a release time", e.ID)
				}
				holds = append(holds, holdRow{AccountID: e.AccountID, Mode: string(e.Mode), Currency: string(p.Currency),
					ChargeID: cmp.Or(p.HoldChargeID, e.ChargeID), Amount: p.Amount, ReleaseAt: newDBTime(p.ReleaseAt)})
			case e.Kind != domain.EntryRelease:
				took, err := consumeHolds(ctx, tx, k, e.ID, -p.Amount)
				if err != nil {
					return nil, err
				}
				takes = append(takes, took...)
			}
		}
	}
	qs := []schema.QueryAppender{tx.NewInsert().Model(&ers), tx.NewInsert().Model(&ps)}
	if len(holds) > 0 {
		qs = append(qs, tx.NewInsert().Model(&holds))
	}
	if len(takes) > 0 {
		qs = append(qs, tx.NewInsert().Model(&takes))
	}
	sort.Slice(keys, func(i, j int) bool { return walletLess(keys[i], keys[j]) })
	now := newDBTime(time.Now())
	for _, k := range keys {
		d := deltas[k]
		// Create the wallet at zero, then add: an upsert would check the
		// non-negative constraints against the debit itself.
		qs = append(qs, tx.NewInsert().Model(&balanceRow{AccountID: k.AccountID, Mode: string(k.Mode), Currency: string(k.Currency),
			UpdatedAt: now}).On("CONFLICT DO NOTHING"),
			tx.NewUpdate().Model((*balanceRow)(nil)).
				Set("available = available + ?", d.Available).Set("pending = pending + ?", d.Pending).Set("owed = owed + ?", d.Owed).
				Set("updated_at = ?", now).
				Where("account_id = ?", k.AccountID).Where("mode = ?", string(k.Mode)).Where("currency = ?", string(k.Currency)))
	}
	return qs, nil
}

func walletLess(a, b domain.WalletKey) bool {
	if a.AccountID != b.AccountID {
		return a.AccountID < b.AccountID
	}
	if a.Mode != b.Mode {
		return a.Mode < b.Mode
	}
	return a.Currency < b.Currency
}

// consumeHolds takes amount from the wallet's holds, latest release first,
// and returns what it took of each hold, as entry entryID's hold takes.
func consumeHolds(ctx context.Context, tx bun.IDB, k domain.WalletKey, entryID string, amount int64) ([]holdTakeRow, error) {
	var rows []holdRow
	q := tx.NewSelect().Model(&rows).Where("lh.account_id = ?", k.AccountID).Where("lh.mode = ?", string(k.Mode)).
		Where("lh.currency = ?", string(k.Currency)).OrderExpr("lh.release_at DESC, lh.id DESC")
	if postgres(tx) {
		// A release deleting one of these holds meanwhile is waited for.
		q = q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		return nil, mapError(err)
	}
	var takes []holdTakeRow
	for _, h := range rows {
		if amount == 0 {
			return takes, nil
		}
		take := min(amount, h.Amount)
		amount -= take
		takes = append(takes, holdTakeRow{EntryID: entryID, AccountID: h.AccountID, Mode: h.Mode, Currency: h.Currency,
			ChargeID: h.ChargeID, Amount: take, ReleaseAt: h.ReleaseAt})
		var err error
		if take == h.Amount {
			_, err = tx.NewDelete().Model((*holdRow)(nil)).Where("id = ?", h.ID).Exec(ctx)
		} else {
			_, err = tx.NewUpdate().Model((*holdRow)(nil)).Set("amount = amount - ?", take).Where("id = ?", h.ID).Exec(ctx)
		}
		if err != nil {
			return nil, mapError(err)
		}
	}
	if amount > 0 {
		return nil, domain.ErrInsufficientBalance
	}
	return takes, nil
}

// Wallets returns the scope's balances with their next release.
func (db *DB) Wallets(ctx context.Context, scope ports.Scope) ([]ports.Wallet, error) {
	var rows []balanceRow
	err := db.bun.NewSelect().Model(&rows).Where("wb.account_id = ?", scope.AccountID).Where("wb.mode = ?", string(scope.Mode)).
		OrderExpr("wb.currency").Scan(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]ports.Wallet, len(rows))
	for i, r := range rows {
		out[i].Balance = domain.Balance{Currency: domain.Currency(r.Currency), Available: r.Available, Pending: r.Pending, Owed: r.Owed}
		var next holdRow
		err := db.bun.NewSelect().Model(&next).Column("release_at").
			Where("lh.account_id = ?", scope.AccountID).Where("lh.mode = ?", string(scope.Mode)).
			Where("lh.currency = ?", r.Currency).OrderExpr("lh.release_at").Limit(1).Scan(ctx)
		if errors.Is(mapError(err), ports.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, mapError(err)
		}
		var sum int64
		err = db.bun.NewSelect().Model((*holdRow)(nil)).ColumnExpr("COALESCE(SUM(lh.amount), 0)").
			Where("lh.account_id = ?", scope.AccountID).Where("lh.mode = ?", string(scope.Mode)).
			Where("lh.currency = ?", r.Currency).Where("lh.release_at = ?", next.ReleaseAt).Scan(ctx, &sum)
		if err != nil {
			return nil, mapError(err)
		}
		at := next.ReleaseAt.Time
		out[i].NextReleaseAt, out[i].NextReleaseAmount = &at, sum
	}
	return out, nil
}

// ListDueHolds returns holds due at now, earliest first.
func (db *DB) ListDueHolds(ctx context.Context, now time.Time, limit int) ([]ports.Hold, error) {
	var rows []holdRow
	err := db.bun.NewSelect().Model(&rows).Where("lh.release_at <= ?", newDBTime(now)).
		OrderExpr("lh.release_at, lh.id").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]ports.Hold, len(rows))
	for i, r := range rows {
		out[i] = ports.Hold{ID: r.ID, Scope: ports.Scope{AccountID: r.AccountID, Mode: domain.Mode(r.Mode)},
			Currency: domain.Currency(r.Currency), ChargeID: r.ChargeID, Amount: r.Amount, ReleaseAt: r.ReleaseAt.Time}
	}
	return out, nil
}

// ReleaseHold releases one hold exactly once. Like every writer of a
// wallet it locks holds before the wallet row (which it updates last), so
// releases and refunds never deadlock; a hold a refund reduced meanwhile is
// left for the next tick.
func (db *DB) ReleaseHold(ctx context.Context, h ports.Hold, entry domain.JournalEntry) (bool, error) {
	released := false
	err := db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewDelete().Model((*holdRow)(nil)).Where("id = ?", h.ID).Where("amount = ?", h.Amount).Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil
		}
		released = true
		return applyEntries(ctx, tx, []domain.JournalEntry{entry})
	})
	return released, mapError(err)
}
