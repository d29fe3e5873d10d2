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
// order the holds were taken.
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
	var ps []postingRow
	if err := t.tx.NewSelect().Model(&ps).Column("ledger_account", "amount").Where("lp.entry_id = ?", e.ID).
		Where("lp.ledger_account IN (?)", bun.List([]string{string(domain.LedgerAvailable), string(domain.LedgerPending)})).
		Scan(ctx); err != nil {
		return domain.RefundDebit{}, mapError(err)
	}
	var d domain.RefundDebit
	for _, p := range ps {
		if p.LedgerAccount == string(domain.LedgerAvailable) {
			d.Available -= p.Amount
		} else {
			d.Pending -= p.Amount
		}
	}
	var takes []holdTakeRow
	if err := t.tx.NewSelect().Model(&takes).Where("ht.entry_id = ?", e.ID).OrderExpr("ht.id").Scan(ctx); err != nil {
		return domain.RefundDebit{}, mapError(err)
	}
	for _, h := range takes {
		d.Takes = append(d.Takes, domain.HoldTake{ChargeID: h.ChargeID, Amount: h.Amount, ReleaseAt: h.ReleaseAt.Time})
	}
	return d, nil
}

var _ ports.ChargeTx = (*chargeTx)(nil)
