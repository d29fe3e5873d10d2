package domain

import (
	"encoding/json"
	"fmt"
	"time"
)

// PrefixTransfer is the prefix of a transfer's id: the credit of one
// split, whose raw id is its EntrySplit entry's.
const PrefixTransfer = "tr_"

// PublicTransfer is a split's credit as the sub-account's transfer.created
// event carries it.
type PublicTransfer struct {
	ID       string   `json:"id"`
	Object   string   `json:"object"`
	Amount   int64    `json:"amount"`
	Currency Currency `json:"currency"`
	// SourceCharge is the platform's charge the share came from, and
	// SourceAccount the platform.
	SourceCharge  string    `json:"source_charge"`
	SourceAccount string    `json:"source_account"`
	Destination   string    `json:"destination"`
	Status        string    `json:"status"`
	CreatedAt     Timestamp `json:"created_at"`
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
		raw, err := newID()
		if err != nil {
			return nil, err
		}
		tr := PublicTransfer{ID: PrefixTransfer + e.ID, Object: "transfer", Amount: amount, Currency: c.s.Currency,
			SourceCharge: PrefixCharge + c.s.ID, SourceAccount: c.s.AccountID, Destination: e.AccountID,
			Status: SplitPaid, CreatedAt: Timestamp(now)}
		ev := Event{ID: PrefixEvent + raw, Type: EventTransferCreated, AccountID: e.AccountID, Mode: c.s.Mode,
			ChargeID: tr.ID, CreatedAt: now.UTC()}
		env := CanonicalEnvelope{ID: ev.ID, Object: "event", APIVersion: APIVersion, Type: ev.Type, CreatedAt: Timestamp(now)}
		env.Data.Object = tr
		if ev.Payload, err = json.Marshal(env); err != nil {
			return nil, fmt.Errorf("encode %s envelope: %w", ev.Type, err)
		}
		out = append(out, ev)
	}
	return out, nil
}
