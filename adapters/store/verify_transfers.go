package store

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
)

// transferSide is what one transfer entry did: its account, mode, and
// what it posted to available and to transfers_in_flight.
type transferSide struct {
	EntryID    string `bun:"id"`
	TransferID string `bun:"transfer_id"`
	AccountID  string `bun:"account_id"`
	Mode       string `bun:"mode"`
	Available  int64  `bun:"available"`
	InFlight   int64  `bun:"in_flight"`
	Other      int64  `bun:"other"`
}

// verifyTransfers checks every transfer against its entries: exactly two
// of kind transfer, one taking its amount from the source's available
// into transfers_in_flight and one giving it from there to the
// destination's available, in the transfer's mode, posting nowhere else,
// so each transfer nets to zero; no transfer entry names a transfer that
// does not exist; and transfers_in_flight holds nothing overall.
func verifyTransfers(ctx context.Context, tx bun.Tx) ([]string, error) {
	var transfers []transferRow
	if err := tx.NewSelect().Model(&transfers).Column("id", "source_account_id", "destination_account_id", "mode", "amount").
		Scan(ctx); err != nil {
		return nil, err
	}
	var sides []transferSide
	err := tx.NewSelect().TableExpr("ledger_entries AS le").Join("LEFT JOIN ledger_postings AS lp ON lp.entry_id = le.id").
		ColumnExpr("le.id, le.transfer_id, le.account_id, le.mode").
		ColumnExpr("COALESCE(SUM(CASE WHEN lp.ledger_account = ? THEN lp.amount END), 0) AS available", string(domain.LedgerAvailable)).
		ColumnExpr("COALESCE(SUM(CASE WHEN lp.ledger_account = ? THEN lp.amount END), 0) AS in_flight", string(domain.LedgerTransfersInFlight)).
		ColumnExpr("COALESCE(SUM(CASE WHEN lp.ledger_account NOT IN (?, ?) THEN 1 END), 0) AS other",
			string(domain.LedgerAvailable), string(domain.LedgerTransfersInFlight)).
		Where("le.kind = ?", string(domain.EntryTransfer)).
		GroupExpr("le.id, le.transfer_id, le.account_id, le.mode").Scan(ctx, &sides)
	if err != nil {
		return nil, err
	}
	byTransfer := map[string][]transferSide{}
	for _, s := range sides {
		byTransfer[s.TransferID] = append(byTransfer[s.TransferID], s)
	}
	var problems []string
	for _, t := range transfers {
		name := fmt.Sprintf("transfer %s%s (%s → %s, %s, %d)", domain.PrefixTransfer, t.ID, t.SourceID, t.DestinationID, t.Mode, t.Amount)
		got := byTransfer[t.ID]
		delete(byTransfer, t.ID)
		if len(got) != 2 {
			problems = append(problems, fmt.Sprintf("%s has %d transfer entries, want 2", name, len(got)))
			continue
		}
		var src, dst int
		for _, s := range got {
			switch {
			case s.Mode != t.Mode || s.Other != 0:
				problems = append(problems, fmt.Sprintf("%s: entry %s is in mode %s with %d postings outside available and transfers_in_flight",
					name, s.EntryID, s.Mode, s.Other))
			case s.AccountID == t.SourceID && s.Available == -t.Amount && s.InFlight == t.Amount:
				src++
			case s.AccountID == t.DestinationID && s.Available == t.Amount && s.InFlight == -t.Amount:
				dst++
			default:
				problems = append(problems, fmt.Sprintf("%s: entry %s of %s posts %d to available and %d to transfers_in_flight",
					name, s.EntryID, s.AccountID, s.Available, s.InFlight))
			}
		}
		if src != 1 || dst != 1 {
			problems = append(problems, fmt.Sprintf("%s: %d source and %d destination entries, want one of each", name, src, dst))
		}
	}
	for id, got := range byTransfer {
		problems = append(problems, fmt.Sprintf("%d transfer entries name transfer %s%s, which does not exist", len(got), domain.PrefixTransfer, id))
	}
	var inFlight int64
	if err := tx.NewSelect().Model((*postingRow)(nil)).ColumnExpr("COALESCE(SUM(amount), 0)").
		Where("ledger_account = ?", string(domain.LedgerTransfersInFlight)).Scan(ctx, &inFlight); err != nil {
		return nil, err
	}
	if inFlight != 0 {
		problems = append(problems, fmt.Sprintf("transfers_in_flight holds %d, want 0", inFlight))
	}
	return problems, nil
}
