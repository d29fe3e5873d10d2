package domain

import (
	"errors"
	"strings"
	"time"
	"unicode/utf8"
)

// PrefixPayout is the prefix of payout ids.
const PrefixPayout = "po_"

// Errors of payouts.
var (
	// ErrPayoutNotCancellable: only a pending payout (not yet sent) can be
	// cancelled.
	ErrPayoutNotCancellable = errors.New("only pending payouts can be cancelled")
	// ErrPayoutNotOpen: the payout is already paid, failed or cancelled.
	ErrPayoutNotOpen = errors.New("payout is already final")
)

// PayoutStatus is the status of a payout. The values are API strings: add,
// never rename.
type PayoutStatus string

// Payout statuses.
const (
	PayoutPending    PayoutStatus = "pending"    // held, not sent yet
	PayoutProcessing PayoutStatus = "processing" // the PSP accepted the Pix
	PayoutPaid       PayoutStatus = "paid"
	PayoutFailed     PayoutStatus = "failed"
	PayoutCancelled  PayoutStatus = "cancelled"
)

// payoutTransitions is the one table of payout status changes.
var payoutTransitions = map[PayoutStatus][]PayoutStatus{
	PayoutPending:    {PayoutProcessing, PayoutPaid, PayoutFailed, PayoutCancelled},
	PayoutProcessing: {PayoutPaid, PayoutFailed},
	PayoutPaid:       nil,
	PayoutFailed:     nil,
	PayoutCancelled:  nil,
}

// Valid reports whether s is a payout status.
func (s PayoutStatus) Valid() bool {
	_, ok := payoutTransitions[s]
	return ok
}

// Open reports whether the payout still holds money (pending, processing).
func (s PayoutStatus) Open() bool { return s == PayoutPending || s == PayoutProcessing }

// Legacy is the status the withdrawal.* envelope carries.
func (s PayoutStatus) Legacy() TxStatus {
	switch s {
	case PayoutPending:
		return "PENDING"
	case PayoutProcessing:
		return "PROCESSING"
	case PayoutPaid:
		return "COMPLETED"
	case PayoutFailed:
		return "FAILED"
	case PayoutCancelled:
		return "CANCELLED"
	}
	return TxStatus(s)
}

// PayoutFailureCodes are the reasons a payout can fail, with the message
// the API shows. PSP answers are mapped to one of them.
var PayoutFailureCodes = map[string]string{
	"invalid_key":               "the Pix key does not exist in the DICT",
	"account_closed":            "the receiving account is closed or blocked",
	"insufficient_funds_at_psp": "the PSP account that sends the Pix had not enough funds",
	"rejected_by_psp":           "the PSP rejected the Pix",
	"expired":                   "the PSP did not settle the Pix in time",
}

// PayoutFailureMessage is the message of a failure code ("" for an
// unknown code).
func PayoutFailureMessage(code string) string { return PayoutFailureCodes[code] }

// PayoutSnapshot is the whole state of a payout, for storage and
// rendering.
type PayoutSnapshot struct {
	ID          string
	AccountID   string
	Mode        Mode
	Amount      int64
	Fee         int64
	Currency    Currency
	Status      PayoutStatus
	Key         PixKey
	Description string
	Metadata    map[string]any
	// SendID is the id of the Pix at the PSP (Efí's idEnvio), derived from
	// the idempotency scope of the create: every attempt to send the payout,
	// in any process and after any crash, names the same Pix.
	SendID         string
	EndToEndID     string
	FailureCode    string
	FailureMessage string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	PaidAt         time.Time
	FailedAt       time.Time
	CancelledAt    time.Time
}

// Payout is money a merchant withdraws from its available balance by Pix.
type Payout struct{ s PayoutSnapshot }

// NewPayoutParams is the input of NewPayout.
type NewPayoutParams struct {
	ID          string
	AccountID   string
	Mode        Mode
	Amount      int64
	Fee         int64
	Key         PixKey
	Description string
	Metadata    map[string]any
	SendID      string
	Now         time.Time
}

// NewPayout validates p and returns a pending payout in BRL.
func NewPayout(p NewPayoutParams) (*Payout, error) {
	if !ValidRawID(p.ID) || p.AccountID == "" || !p.Mode.Valid() || p.Now.IsZero() || !ValidTxID(p.SendID) {
		return nil, Invalid(FieldID, "payout needs an id, account, mode, send id and time")
	}
	if p.Amount <= 0 {
		return nil, Invalid(FieldAmount, "%s must be a positive integer in centavos", FieldAmount)
	}
	if p.Amount > MaxAmount {
		return nil, Invalid(FieldAmount, "%s must not exceed %d", FieldAmount, MaxAmount)
	}
	if p.Fee < 0 || p.Fee > MaxAmount {
		return nil, Invalid(FieldFee, "%s must be between 0 and %d", FieldFee, MaxAmount)
	}
	if !p.Key.Type.Valid() || p.Key.Value == "" {
		return nil, Missing(FieldPixKey)
	}
	if utf8.RuneCountInString(p.Description) > MaxPayoutDescriptionLen {
		return nil, Invalid(FieldDescription, "%s must be at most %d characters", FieldDescription, MaxPayoutDescriptionLen)
	}
	if err := CheckText(FieldDescription, p.Description, true); err != nil {
		return nil, err
	}
	meta, err := cleanMetadata(p.Metadata, "")
	if err != nil {
		return nil, err
	}
	now := p.Now.UTC()
	return &Payout{s: PayoutSnapshot{ID: p.ID, AccountID: p.AccountID, Mode: p.Mode, Amount: p.Amount, Fee: p.Fee,
		Currency: CurrencyBRL, Status: PayoutPending, Key: p.Key, Description: p.Description, Metadata: meta,
		SendID: p.SendID, CreatedAt: now, UpdatedAt: now}}, nil
}

// MaxPayoutDescriptionLen bounds a payout's description (the PSPs send at
// most 140 characters to the receiver).
const MaxPayoutDescriptionLen = 140

// UnmarshalPayoutFromStorage rebuilds a stored payout without validation:
// it was validated when created.
func UnmarshalPayoutFromStorage(s PayoutSnapshot) *Payout { return &Payout{s: s} }

// Snapshot returns a copy of the payout's state.
func (p *Payout) Snapshot() PayoutSnapshot { return p.s }

// ID is the raw id.
func (p *Payout) ID() string { return p.s.ID }

// AccountID is the owner.
func (p *Payout) AccountID() string { return p.s.AccountID }

// Mode is live or test.
func (p *Payout) Mode() Mode { return p.s.Mode }

// Status is the current status.
func (p *Payout) Status() PayoutStatus { return p.s.Status }

// Amount is what the receiver gets.
func (p *Payout) Amount() int64 { return p.s.Amount }

// Fee is the Pix-out fee the merchant pays on top.
func (p *Payout) Fee() int64 { return p.s.Fee }

// Debit is amount plus fee: what leaves the merchant's available balance.
func (p *Payout) Debit() int64 { return p.s.Amount + p.s.Fee }

// Key is the destination.
func (p *Payout) Key() PixKey { return p.s.Key }

// SendID is the PSP's id of the Pix.
func (p *Payout) SendID() string { return p.s.SendID }

// Description is the merchant's text.
func (p *Payout) Description() string { return p.s.Description }

func (p *Payout) move(to PayoutStatus, now time.Time) error {
	if !p.s.Status.Open() {
		return ErrPayoutNotOpen
	}
	for _, ok := range payoutTransitions[p.s.Status] {
		if ok == to {
			p.s.Status = to
			p.s.UpdatedAt = now.UTC()
			return nil
		}
	}
	return ErrInvalidTransition
}

// MarkProcessing records that the PSP accepted the Pix.
func (p *Payout) MarkProcessing(now time.Time) error { return p.move(PayoutProcessing, now) }

// MarkPaid records the PSP's confirmation, with the Pix's end-to-end id
// when the PSP gave one.
func (p *Payout) MarkPaid(endToEndID string, now time.Time) error {
	if err := p.move(PayoutPaid, now); err != nil {
		return err
	}
	if endToEndID != "" {
		p.s.EndToEndID = endToEndID
	}
	p.s.PaidAt = now.UTC()
	return nil
}

// MarkFailed records a failure; an unknown code becomes rejected_by_psp.
func (p *Payout) MarkFailed(code string, now time.Time) error {
	if err := p.move(PayoutFailed, now); err != nil {
		return err
	}
	if PayoutFailureMessage(code) == "" {
		code = "rejected_by_psp"
	}
	p.s.FailureCode, p.s.FailureMessage = code, PayoutFailureMessage(code)
	p.s.FailedAt = now.UTC()
	return nil
}

// Cancel closes a payout that was not sent yet.
func (p *Payout) Cancel(now time.Time) error {
	if p.s.Status != PayoutPending {
		return ErrPayoutNotCancellable
	}
	if err := p.move(PayoutCancelled, now); err != nil {
		return err
	}
	p.s.CancelledAt = now.UTC()
	return nil
}

// SetEndToEndID records the Pix's end-to-end id once the PSP names it.
func (p *Payout) SetEndToEndID(e2e string, now time.Time) {
	if e2e != "" && e2e != p.s.EndToEndID {
		p.s.EndToEndID = e2e
		p.s.UpdatedAt = now.UTC()
	}
}

// PublicPayout is the payout as the API and the payout.* webhooks show it.
type PublicPayout struct {
	ID             string            `json:"id"`
	Object         string            `json:"object"`
	Amount         int64             `json:"amount"`
	Currency       Currency          `json:"currency"`
	Status         PayoutStatus      `json:"status"`
	Destination    PublicDestination `json:"destination"`
	Fee            int64             `json:"fee"`
	EndToEndID     *string           `json:"end_to_end_id"`
	FailureCode    *string           `json:"failure_code"`
	FailureMessage *string           `json:"failure_message"`
	Description    *string           `json:"description"`
	Metadata       map[string]any    `json:"metadata"`
	CreatedAt      Timestamp         `json:"created_at"`
	PaidAt         *Timestamp        `json:"paid_at"`
	FailedAt       *Timestamp        `json:"failed_at"`
	CancelledAt    *Timestamp        `json:"cancelled_at"`
}

// PublicDestination is the masked Pix key of a payout.
type PublicDestination struct {
	Type PixKeyType `json:"type"`
	Key  string     `json:"key"`
}

// Public renders the payout.
func (p *Payout) Public() PublicPayout {
	s := p.s
	str := func(v string) *string {
		if v == "" {
			return nil
		}
		return &v
	}
	at := func(t time.Time) *Timestamp {
		if t.IsZero() {
			return nil
		}
		ts := Timestamp(t)
		return &ts
	}
	out := PublicPayout{ID: PrefixPayout + s.ID, Object: "payout", Amount: s.Amount, Currency: s.Currency, Status: s.Status,
		Destination: PublicDestination{Type: s.Key.Type, Key: s.Key.Masked()}, Fee: s.Fee,
		EndToEndID: str(s.EndToEndID), FailureCode: str(s.FailureCode), FailureMessage: str(s.FailureMessage),
		Description: str(s.Description), Metadata: s.Metadata, CreatedAt: Timestamp(s.CreatedAt),
		PaidAt: at(s.PaidAt), FailedAt: at(s.FailedAt), CancelledAt: at(s.CancelledAt)}
	if out.Metadata == nil {
		out.Metadata = map[string]any{}
	}
	return out
}

// ParsePayoutID accepts "po_<raw>" or the bare raw id.
func ParsePayoutID(s string) (string, bool) {
	raw := strings.TrimPrefix(s, PrefixPayout)
	return raw, ValidRawID(raw)
}
