package domain

import (
	"time"
)

// PrefixTransfer is the prefix of a transfer's id: a transfer's
// (transfer.go), or the credit of one split, whose raw id is its
// EntrySplit entry's.
const PrefixTransfer = "tr_"

// PublicTransfer is a transfer as the API shows it and transfer.created
// carries it: one made with POST /v1/transfers, or a split's credit.
type PublicTransfer struct {
	ID       string   `json:"id"`
	Object   string   `json:"object"`
	Amount   int64    `json:"amount"`
	Currency Currency `json:"currency"`
	// SourceCharge is the platform's charge a split's share came from
	// (nil for a transfer), and SourceAccount the account the money left.
	SourceCharge  *string        `json:"source_charge"`
	SourceAccount string         `json:"source_account"`
	Destination   string         `json:"destination"`
	Status        string         `json:"status"`
	Description   *string        `json:"description"`
	Metadata      map[string]any `json:"metadata"`
	CreatedAt     Timestamp      `json:"created_at"`
}

// TransferEvents are the transfer.created events of c's split entries
// among entries: one per EntrySplit, in the scope of the sub-account it
// credited, keyed (Event.ChargeID) by the transfer's id.
func TransferEvents(c *Charge, entries []JournalEntry, newID func() (string, error), now time.Time) ([]Event, error) {
	var out []Event
	for _, e := range entries {
		if e.Kind != EntrySplit {
			continue
		}
		var amount int64
		for _, p := range e.Postings {
			if WalletAccount(p.Account) {
				amount += p.Amount
			}
		}
		charge := PrefixCharge + c.s.ID
		tr := PublicTransfer{ID: PrefixTransfer + e.ID, Object: "transfer", Amount: amount, Currency: c.s.Currency,
			SourceCharge: &charge, SourceAccount: c.s.AccountID, Destination: e.AccountID,
			Status: SplitPaid, Metadata: map[string]any{}, CreatedAt: Timestamp(now)}
		ev, err := transferEvent(tr, e.AccountID, c.s.Mode, newID, now)
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}
