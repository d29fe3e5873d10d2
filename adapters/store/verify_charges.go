package store

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
)

// verifyChargeMoney checks each charge against its ledger entries: one
// payment entry when the merchant was credited and none otherwise; payer
// funds (payer_funds) equal to what the charge holds for review plus its
// returns not yet confirmed; and one dispute entry per recorded dispute,
// together sending exactly the disputed amount to the acquirer: every
// charge, or those named.
func verifyChargeMoney(ctx context.Context, tx bun.Tx, ids []string) ([]string, error) {
	var problems []string
	err := inChunks(ids, func(chunk []string) error {
		more, err := verifyChargeMoneyOf(ctx, tx, chunk)
		problems = append(problems, more...)
		return err
	})
	return problems, err
}

// verifyChargeMoneyOf is verifyChargeMoney for the charges named (every
// charge when nil).
func verifyChargeMoneyOf(ctx context.Context, tx bun.Tx, ids []string) ([]string, error) {
	var charges []chargeRow
	if err := whereIn(tx.NewSelect().Model(&charges), "c.id", ids).
		Column("id", "account_id", "mode", "status", "return_state", "settlement_amount", "disputes").Scan(ctx); err != nil {
		return nil, err
	}
	type byCharge struct {
		ChargeID string `bun:"charge_id"`
		N        int64  `bun:"n"`
		Sum      int64  `bun:"total"`
	}
	scan := func(q *bun.SelectQuery) (map[string]byCharge, error) {
		var rows []byCharge
		if err := q.Scan(ctx, &rows); err != nil {
			return nil, err
		}
		out := make(map[string]byCharge, len(rows))
		for _, r := range rows {
			out[r.ChargeID] = r
		}
		return out, nil
	}
	payments, err := scan(whereIn(tx.NewSelect().Model((*entryRow)(nil)), "le.charge_id", ids).ColumnExpr("charge_id, count(*) AS n, 0 AS total").
		Where("kind = ?", string(domain.EntryPayment)).GroupExpr("charge_id"))
	if err != nil {
		return nil, err
	}
	payerFunds, err := scan(whereIn(tx.NewSelect().TableExpr("ledger_postings AS lp").Join("JOIN ledger_entries AS le ON le.id = lp.entry_id"), "le.charge_id", ids).
		ColumnExpr("le.charge_id, count(*) AS n, SUM(lp.amount) AS total").
		Where("lp.ledger_account = ?", string(domain.LedgerPayerFunds)).GroupExpr("le.charge_id"))
	if err != nil {
		return nil, err
	}
	owedBack, err := scan(whereIn(tx.NewSelect().Model((*pixReturnRow)(nil)), "pr.charge_id", ids).ColumnExpr("charge_id, count(*) AS n, SUM(amount) AS total").
		Where("status <> ?", string(domain.PixReturnReturned)).GroupExpr("charge_id"))
	if err != nil {
		return nil, err
	}
	disputed, err := scan(whereIn(tx.NewSelect().TableExpr("ledger_postings AS lp").Join("JOIN ledger_entries AS le ON le.id = lp.entry_id"), "le.charge_id", ids).
		ColumnExpr("le.charge_id, count(*) AS n, SUM(lp.amount) AS total").Where("le.kind = ?", string(domain.EntryDispute)).
		Where("lp.ledger_account = ?", string(domain.LedgerAcquirer)).GroupExpr("le.charge_id"))
	if err != nil {
		return nil, err
	}
	var problems []string
	for i := range charges {
		r := &charges[i]
		ds, derr := decodeDisputes(r.Disputes)
		if derr != nil {
			return nil, fmt.Errorf("store: decode disputes of charge %s: %w", r.ID, derr)
		}
		snap := domain.ChargeSnapshot{ID: r.ID, Status: domain.TxStatus(r.Status), ReturnState: domain.ReturnState(r.ReturnState), Disputes: ds}
		if r.SettlementAmount != nil {
			snap.Settlement = &domain.Settlement{Amount: *r.SettlementAmount}
		}
		c := domain.UnmarshalChargeFromStorage(snap)
		name := fmt.Sprintf("account %s (%s): charge %s (%s)", r.AccountID, r.Mode, r.ID, r.Status)
		want := int64(0)
		if c.Credited() {
			want = 1
		}
		if got := payments[r.ID].N; got != want {
			problems = append(problems, fmt.Sprintf("%s has %d payment entries, want %d", name, got, want))
		}
		held := int64(0)
		if c.HeldForReview() {
			held = c.Settlement().Amount
		}
		if got, back := payerFunds[r.ID].Sum, owedBack[r.ID].Sum; got != held+back {
			problems = append(problems, fmt.Sprintf("%s holds %d of payer funds, want %d held for review + %d owed back",
				name, got, held, back))
		}
		if got := disputed[r.ID]; got.N != int64(len(ds)) || got.Sum != c.DisputedAmount() {
			problems = append(problems, fmt.Sprintf("%s has %d dispute entries of %d, want %d of %d",
				name, got.N, got.Sum, len(ds), c.DisputedAmount()))
		}
	}
	return problems, nil
}
