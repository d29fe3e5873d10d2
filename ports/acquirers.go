package ports

//go:generate go tool moq -rm -out ../mocks/acquirers.go -pkg mocks . AcquirerAccountStore PixReceiver PixReconcileMarks

import (
	"context"
	"time"

	"github.com/quitapix/quita/domain"
)

// AcquirerAccount is one account's configuration of a provider. Sealed is
// opaque to the store: the adapter encrypts it (AES-GCM) before it is
// written and never logs it.
type AcquirerAccount struct {
	AccountID string
	Provider  string
	Sealed    []byte
	UpdatedAt time.Time
}

// AcquirerAccountStore keeps per-account provider configuration and finds
// charges by the txid a provider names them with.
type AcquirerAccountStore interface {
	// PutAcquirerAccount inserts or replaces the account's configuration
	// of a.Provider.
	PutAcquirerAccount(ctx context.Context, a AcquirerAccount) error
	// GetAcquirerAccount returns ErrNotFound when the account has not
	// configured provider.
	GetAcquirerAccount(ctx context.Context, accountID, provider string) (*AcquirerAccount, error)
	// ListAcquirerAccounts returns every account that configured provider.
	ListAcquirerAccounts(ctx context.Context, provider string) ([]AcquirerAccount, error)
	// FindChargeByTxID returns the raw id of the scope's charge whose Pix
	// txid is txid. ErrNotFound when there is none.
	FindChargeByTxID(ctx context.Context, scope Scope, txid string) (string, error)
}

// ReceivedPix is a Pix the provider confirms it received (API Pix "pix").
type ReceivedPix struct {
	EndToEndID string
	// TxID is the cob the Pix paid, "" for a Pix without one.
	TxID   string
	Amount int64
	PaidAt time.Time
	// PayerTaxID is the payer's CPF or CNPJ when the provider discloses it
	// (a PSP-specific extension), "" otherwise.
	PayerTaxID string
	PayerName  string
	// Returned is the sum of its devoluções already accepted.
	Returned int64
	// Devolutions are its devoluções as the provider lists them, Quita's
	// own and those the payer's PSP made (MED returns).
	Devolutions []PixDevolution
}

// PixDevolution is one devolução of a received Pix.
type PixDevolution struct {
	// ID is the devolução's id: Quita's refund or return id for one Quita
	// asked for, the PSP's for a MED return.
	ID     string
	Amount int64
	// Reason is the dispute reason of a MED return (natureza MED_*), ""
	// for an ordinary devolução (ORIGINAL, RETIRADA).
	Reason domain.DisputeReason
	// Done reports that the money left (DEVOLVIDO); one in processing has
	// not yet, and a refused one never will (it is not listed).
	Done bool
	// At is when the money left, zero when the provider does not say.
	At time.Time
}

// PixQuery pages received Pix (GET /pix) of one account.
type PixQuery struct {
	AccountID  string
	Start, End time.Time
	TxID       string
	// PayerTaxID filters by payer CPF or CNPJ.
	PayerTaxID string
	// Page is 0-based.
	Page int
}

// PixPage is one page of received Pix.
type PixPage struct {
	Pix  []ReceivedPix
	More bool
}

// PixReceiver reads what a provider received, for notifications and
// reconciliation. Errors: ErrNotFound, ErrAcquirerUnavailable,
// ErrAcquirerRejected, ErrAcquirerUnauthorized, ErrAcquirerNotConfigured
// (the account has no provider).
type PixReceiver interface {
	// ReceiverAccounts lists the accounts configured with the provider.
	ReceiverAccounts(ctx context.Context) ([]string, error)
	// GetPix confirms one Pix of the account by end-to-end id.
	GetPix(ctx context.Context, accountID, endToEndID string) (*ReceivedPix, error)
	// ListPix returns a page of the account's received Pix.
	ListPix(ctx context.Context, q PixQuery) (PixPage, error)
}

// PixReconcileMarks keeps how far each account's received Pix are
// reconciled, so that a pass after an outage (the PSP, or the account's
// credentials) reads from there and not only its usual look-back.
type PixReconcileMarks interface {
	// PixReconciledThrough returns the end of the account's last
	// reconciliation window whose every Pix was read and applied; the zero
	// time when there is none.
	PixReconciledThrough(ctx context.Context, accountID string) (time.Time, error)
	// SetPixReconciledThrough records that the account's Pix up to t are
	// read and applied. It never moves the mark back (another process may
	// have gone further).
	SetPixReconciledThrough(ctx context.Context, accountID string, t time.Time) error
}

// ScopedNamer is implemented by an acquirer that routes scopes to different
// providers: NameFor is the name of the provider that serves scope.
type ScopedNamer interface {
	NameFor(scope Scope) string
}

// ProviderName is the name of the provider a serves scope with.
func ProviderName(a Acquirer, scope Scope) string {
	if n, ok := a.(ScopedNamer); ok {
		return n.NameFor(scope)
	}
	return a.Name()
}

// CashoutSupport is implemented by an acquirer that may not send refunds as
// a new Pix to a key (cashout) in some scopes.
type CashoutSupport interface {
	SupportsCashout(scope Scope) bool
}

// SupportsCashout reports whether a can refund by cashout in scope
// (acquirers that do not say support it).
func SupportsCashout(a Acquirer, scope Scope) bool {
	if c, ok := a.(CashoutSupport); ok {
		return c.SupportsCashout(scope)
	}
	return true
}

// DueDateSupport is implemented by an acquirer that can open due-date
// charges (the API Pix's cobv) in some scopes.
type DueDateSupport interface {
	SupportsDueDate(scope Scope) bool
}

// SupportsDueDate reports whether a can open a due-date charge in scope.
// An acquirer that does not say cannot: its cob would carry neither the due
// date nor the rules, so the payer's bank would ask the wrong amount.
func SupportsDueDate(a Acquirer, scope Scope) bool {
	if d, ok := a.(DueDateSupport); ok {
		return d.SupportsDueDate(scope)
	}
	return false
}
