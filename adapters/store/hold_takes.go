package store

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// holdTakeRow is what one ledger entry took from one hold of pending money
// (migration 20261207000002). Written in the entry's transaction, never
// changed: an entry's takes sum to what its postings took from pending.
type holdTakeRow struct {
	bun.BaseModel `bun:"table:ledger_hold_takes,alias:ht"`

	ID        int64  `bun:"id,pk,autoincrement"`
	EntryID   string `bun:"entry_id"`
	AccountID string `bun:"account_id"`
	Mode      string `bun:"mode"`
	Currency  string `bun:"currency"`
	ChargeID  string `bun:"charge_id"`
	Amount    int64  `bun:"amount"`
	ReleaseAt dbTime `bun:"release_at"`
}

// RefundDebit implements ports.ChargeTx: the split of the refund's debit,
// from its postings on the merchant's accounts and its hold takes, in the
// order the holds were taken, and what the charge's splits gave back of
// it (its splits_payable posting).
func (t *chargeTx) RefundDebit(ctx context.Context, refundID string) (domain.RefundDebit, error) {
	var e entryRow
	err := t.tx.NewSelect().Model(&e).Column("id").
		Where("le.charge_id = ?", t.chargeID).Where("le.refund_id = ?", refundID).
		Where("le.kind = ?", string(domain.EntryRefund)).
		Where("le.account_id = ?", t.scope.AccountID).Where("le.mode = ?", string(t.scope.Mode)).
		Limit(1).Scan(ctx)
	if err != nil {
		return domain.RefundDebit{}, mapError(err)
	}
	d, err := t.entryDebit(ctx, e.ID)
	return d.RefundDebit, err
}

// SplitDebits implements ports.ChargeTx.
func (t *chargeTx) SplitDebits(ctx context.Context, refundID string) ([]domain.SplitDebit, error) {
	var es []entryRow
	err := t.tx.NewSelect().Model(&es).Column("id", "account_id", "kind").
		Where("le.charge_id = ?", t.chargeID).Where("le.refund_id = ?", refundID).
		Where("le.kind IN (?)", bun.List([]string{string(domain.EntrySplitReversal), string(domain.EntrySplitAdvance)})).
		Where("le.mode = ?", string(t.scope.Mode)).OrderExpr("le.id").Scan(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]domain.SplitDebit, len(es))
	for i, e := range es {
		if out[i], err = t.entryDebit(ctx, e.ID); err != nil {
			return nil, err
		}
		out[i].Account, out[i].Advance = e.AccountID, e.Kind == string(domain.EntrySplitAdvance)
	}
	return out, nil
}

// entryDebit is what entry entryID took from its wallet (available,
// pending with the holds it took, owed) and put in splits_payable.
func (t *chargeTx) entryDebit(ctx context.Context, entryID string) (domain.SplitDebit, error) {
	var ps []postingRow
	if err := t.tx.NewSelect().Model(&ps).Column("ledger_account", "amount").Where("lp.entry_id = ?", entryID).
		Where("lp.ledger_account IN (?)", bun.List([]string{string(domain.LedgerAvailable), string(domain.LedgerPending),
			string(domain.LedgerMerchantOwed), string(domain.LedgerSplitsPayable)})).
		Scan(ctx); err != nil {
		return domain.SplitDebit{}, mapError(err)
	}
	var d domain.SplitDebit
	for _, p := range ps {
		switch domain.LedgerAccount(p.LedgerAccount) {
		case domain.LedgerAvailable:
			d.Available -= p.Amount
		case domain.LedgerPending:
			d.Pending -= p.Amount
		case domain.LedgerMerchantOwed:
			d.Owed -= p.Amount
		case domain.LedgerSplitsPayable:
			d.Reversed -= p.Amount
		}
	}
	var takes []holdTakeRow
	if err := t.tx.NewSelect().Model(&takes).Where("ht.entry_id = ?", entryID).OrderExpr("ht.id").Scan(ctx); err != nil {
		return domain.SplitDebit{}, mapError(err)
	}
	for _, h := range takes {
		d.Takes = append(d.Takes, domain.HoldTake{ChargeID: h.ChargeID, Amount: h.Amount, ReleaseAt: h.ReleaseAt.Time})
	}
	return d, nil
}

// Platform implements ports.ChargeTx.
func (t *chargeTx) Platform(ctx context.Context) (string, error) {
	var parent *string
	err := t.tx.NewSelect().Table("accounts").Column("parent_account_id").Where("id = ?", t.scope.AccountID).Scan(ctx, &parent)
	if err != nil {
		return "", mapError(err)
	}
	if parent == nil {
		return "", nil
	}
	return *parent, nil
}

var _ ports.ChargeTx = (*chargeTx)(nil)
