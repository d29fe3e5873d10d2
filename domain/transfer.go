package domain

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Ledger pieces of a transfer.
const (
	// LedgerTransfersInFlight holds, inside the one transaction that
	// writes a transfer, the amount between the source's entry and the
	// destination's; it nets to zero per transfer.
	LedgerTransfersInFlight LedgerAccount = "transfers_in_flight"
	// EntryTransfer is one side of a transfer: on the source, available
	// to transfers_in_flight; on the destination, back out to available.
	// The entry's TransferID names the transfer.
	EntryTransfer EntryKind = "transfer"
)

// TransferPaid is the status of every transfer: it moves money between
// two wallets in the transaction that records it.
const TransferPaid = "paid"

// MaxTransferDescriptionLen bounds a transfer's description.
const MaxTransferDescriptionLen = 140

// ErrTransferToSelf: a transfer's destination is its source.
var ErrTransferToSelf = errors.New("a transfer needs two different accounts")

// TransferSnapshot is the whole state of a transfer, for storage and
// rendering. A transfer never changes once written.
type TransferSnapshot struct {
	ID            string
	SourceID      string
	DestinationID string
	Mode          Mode
	Amount        int64
	Currency      Currency
	Description   string
	Metadata      map[string]any
	CreatedAt     time.Time
}

// Transfer moves money from one account's available balance to
// another's, between a platform and one of its sub-accounts.
type Transfer struct{ s TransferSnapshot }

// NewTransferParams is the input of NewTransfer. Who may send to whom is
// decided before (app.TransferService); NewTransfer checks the values.
type NewTransferParams struct {
	ID            string
	SourceID      string
	DestinationID string
	Mode          Mode
	Amount        int64
	Currency      Currency
	Description   string
	Metadata      map[string]any
	Now           time.Time
}

// NewTransfer validates p. Errors name FieldAmount, FieldDescription,
// FieldMetadata or FieldTransferDest (ErrTransferToSelf for a destination
// that is the source).
func NewTransfer(p NewTransferParams) (*Transfer, error) {
	if !ValidRawID(p.ID) || p.SourceID == "" || !p.Mode.Valid() || p.Now.IsZero() || p.Currency == "" {
		return nil, Invalid(FieldID, "transfer needs an id, source, mode, currency and time")
	}
	if p.DestinationID == "" {
		return nil, Missing(FieldTransferDest)
	}
	if p.DestinationID == p.SourceID {
		return nil, ErrTransferToSelf
	}
	if p.Amount <= 0 {
		return nil, Invalid(FieldAmount, "%s must be a positive integer in minor units", FieldAmount)
	}
	if p.Amount > MaxAmount {
		return nil, Invalid(FieldAmount, "%s must not exceed %d", FieldAmount, MaxAmount)
	}
	if utf8.RuneCountInString(p.Description) > MaxTransferDescriptionLen {
		return nil, Invalid(FieldDescription, "%s must be at most %d characters", FieldDescription, MaxTransferDescriptionLen)
	}
	if err := CheckText(FieldDescription, p.Description, true); err != nil {
		return nil, err
	}
	meta, err := cleanMetadata(p.Metadata, "")
	if err != nil {
		return nil, err
	}
	return &Transfer{s: TransferSnapshot{ID: p.ID, SourceID: p.SourceID, DestinationID: p.DestinationID, Mode: p.Mode,
		Amount: p.Amount, Currency: p.Currency, Description: p.Description, Metadata: meta, CreatedAt: p.Now.UTC()}}, nil
}

// UnmarshalTransferFromStorage rebuilds a stored transfer without
// validation: it was validated when created.
func UnmarshalTransferFromStorage(s TransferSnapshot) *Transfer { return &Transfer{s: s} }

// Snapshot returns a copy of the transfer's state.
func (t *Transfer) Snapshot() TransferSnapshot { return t.s }

// ID is the raw id.
func (t *Transfer) ID() string { return t.s.ID }

// Entries are the transfer's two ledger entries, ids srcID and dstID:
// the source's available to transfers_in_flight, then transfers_in_flight
// to the destination's available. Each balances; together they move
// amount from one wallet to the other and leave transfers_in_flight as it
// was. The store refuses them (ErrInsufficientBalance) when the source's
// available cannot cover the amount.
func (t *Transfer) Entries(srcID, dstID string) []JournalEntry {
	s := t.s
	entry := func(id, account string, sign int64) JournalEntry {
		return JournalEntry{ID: id, AccountID: account, Mode: s.Mode, TransferID: s.ID, Kind: EntryTransfer, CreatedAt: s.CreatedAt,
			Postings: []Posting{
				{Account: LedgerAvailable, Currency: s.Currency, Amount: sign * s.Amount},
				{Account: LedgerTransfersInFlight, Currency: s.Currency, Amount: -sign * s.Amount},
			}}
	}
	return []JournalEntry{entry(srcID, s.SourceID, -1), entry(dstID, s.DestinationID, 1)}
}

// Public is the transfer as the API shows it, to its source and its
// destination alike.
func (t *Transfer) Public() PublicTransfer {
	s := t.s
	out := PublicTransfer{ID: PrefixTransfer + s.ID, Object: "transfer", Amount: s.Amount, Currency: s.Currency,
		SourceAccount: s.SourceID, Destination: s.DestinationID, Status: TransferPaid, Metadata: s.Metadata,
		CreatedAt: Timestamp(s.CreatedAt)}
	if s.Description != "" {
		d := s.Description
		out.Description = &d
	}
	if out.Metadata == nil {
		out.Metadata = map[string]any{}
	}
	return out
}

// Events are the transfer's transfer.created events: one in the source's
// scope and one in the destination's, each carrying the public transfer
// and keyed (Event.ChargeID) by the transfer's id.
func (t *Transfer) Events(newID func() (string, error)) ([]Event, error) {
	pub := t.Public()
	var out []Event
	for _, account := range []string{t.s.SourceID, t.s.DestinationID} {
		ev, err := transferEvent(pub, account, t.s.Mode, newID, t.s.CreatedAt)
		if err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, nil
}

// transferEvent is the transfer.created event of tr in account's scope.
func transferEvent(tr PublicTransfer, account string, mode Mode, newID func() (string, error), now time.Time) (Event, error) {
	raw, err := newID()
	if err != nil {
		return Event{}, err
	}
	ev := Event{ID: PrefixEvent + raw, Type: EventTransferCreated, AccountID: account, Mode: mode, ChargeID: tr.ID, CreatedAt: now.UTC()}
	env := CanonicalEnvelope{ID: ev.ID, Object: "event", APIVersion: APIVersion, Type: ev.Type, CreatedAt: Timestamp(now)}
	env.Data.Object = tr
	if ev.Payload, err = json.Marshal(env); err != nil {
		return Event{}, fmt.Errorf("encode %s envelope: %w", ev.Type, err)
	}
	return ev, nil
}

// ParseTransferID accepts "tr_<raw>" or the bare raw id.
func ParseTransferID(s string) (string, bool) {
	raw := strings.TrimPrefix(s, PrefixTransfer)
	return raw, ValidRawID(raw)
}
