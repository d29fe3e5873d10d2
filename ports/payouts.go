package ports

//go:generate go tool moq -rm -out ../mocks/payouts.go -pkg mocks . PayoutStore PixSender

import (
	"context"
	"time"

	"github.com/quitapix/quita/domain"
)

// PayoutQuery filters a payout list. Results are newest first (created_at,
// then id, descending).
type PayoutQuery struct {
	Scope
	// Limit is 1..100.
	Limit int
	// StartingAfter is the raw id of the last payout of the previous page.
	StartingAfter string
	Statuses      []domain.PayoutStatus
}

// PayoutRef names one payout in its scope.
type PayoutRef struct {
	Scope
	ID string
}

// PayoutChange is what one change of a payout writes in the same database
// transaction as the payout itself.
type PayoutChange struct {
	Events []domain.Event
	// Entries are applied to the wallets as ChargeChange's are: a wallet
	// that would go negative fails the change with
	// domain.ErrInsufficientBalance.
	Entries []domain.JournalEntry
	// RecheckAt, when set, is when workers look at the payout again (its
	// lease): a payout the PSP is working on is reconciled then.
	RecheckAt time.Time
}

// PayoutChangeFunc computes a change of the locked payout.
type PayoutChangeFunc func(ctx context.Context, p *domain.Payout) (PayoutChange, error)

// PayoutStore keeps payouts with their events and ledger entries.
type PayoutStore interface {
	// CreatePayout inserts rec (when not nil), p, events and entries in
	// one transaction. ErrIdempotencyKeyExists when rec's key is used;
	// domain.ErrInsufficientBalance when the entries would take a wallet
	// below zero. Either way nothing is written. The wallet row is updated
	// with a conditional delta (the non-negative check), so concurrent
	// creates can never overdraw it whatever they read before.
	CreatePayout(ctx context.Context, p *domain.Payout, events []domain.Event, entries []domain.JournalEntry, rec *IdempotencyRecord) error
	// Wallets returns the scope's wallets (one per currency), as committed.
	Wallets(ctx context.Context, scope Scope) ([]Wallet, error)
	// GetPayout loads a payout of the scope. ErrNotFound when it does not
	// exist or belongs to another account or mode.
	GetPayout(ctx context.Context, scope Scope, id string) (*domain.Payout, error)
	// UpdatePayout locks the payout row (FOR UPDATE on Postgres, the write
	// lock on SQLite) until the end of the transaction, calls fn, and when
	// fn returns nil saves the payout and fn's change in the same
	// transaction. fn's error rolls back and is returned as is.
	// ErrNotFound when the payout is not in scope.
	UpdatePayout(ctx context.Context, scope Scope, id string, fn PayoutChangeFunc) error
	// UpdatePayouts is UpdatePayout for several distinct payouts in one
	// transaction (the payout worker's step of a whole claim): it locks
	// their rows in id order, calls fn for each, and saves each payout for
	// which fn returned nil with its change. errs has one entry per ref:
	// nil when it was saved, fn's error as is when fn refused it (that
	// payout is left as it was, the others are still saved), ErrNotFound
	// when it is not in its ref's scope. err is the transaction's own
	// failure (a wallet's non-negative check included): nothing is saved.
	UpdatePayouts(ctx context.Context, refs []PayoutRef, fn PayoutChangeFunc) (errs []error, err error)
	// ListPayouts returns up to q.Limit payouts and whether more follow.
	// ErrNotFound when q.StartingAfter is not a payout of the scope.
	ListPayouts(ctx context.Context, q PayoutQuery) ([]*domain.Payout, bool, error)
	// ClaimPayouts leases up to limit open payouts (pending or processing)
	// whose lease has ended or never began, in every scope, until
	// leaseUntil; on Postgres with FOR UPDATE SKIP LOCKED so concurrent
	// workers claim different payouts.
	ClaimPayouts(ctx context.Context, now, leaseUntil time.Time, limit int) ([]PayoutRef, error)
	// FindPayoutBySendID finds a payout by the PSP's id of its Pix, in any
	// scope (PSP notifications name only that). ErrNotFound when none.
	FindPayoutBySendID(ctx context.Context, sendID string) (PayoutRef, error)
}

// PixSendRequest asks a PSP to send a Pix to a key. SendID is derived
// from the idempotency scope of the request that created the payout (for
// a cashout refund, from the refund: domain.RefundSendID), so every retry,
// in any process and after any crash, names the same Pix.
type PixSendRequest struct {
	Scope
	SendID      string
	Amount      int64
	Key         domain.PixKey
	Description string
}

// PixSendResult is the PSP's view of a sent Pix: processing, paid or
// failed (with a domain.PayoutFailureCodes code).
type PixSendResult struct {
	Status      domain.PayoutStatus
	EndToEndID  string
	FailureCode string
}

// PixSender is an acquirer capability: Pix out to a key.
type PixSender interface {
	// SendPix sends the Pix once: a SendID the PSP has seen answers the
	// first send's state and sends nothing. Errors:
	// ErrAcquirerRejected only when the request's content was refused and
	// the PSP confirms it holds no Pix under SendID (or the request was
	// refused before any call); ErrAcquirerUnavailable,
	// ErrAcquirerUnauthorized, ErrAcquirerNotConfigured and any other
	// error: nothing is known, the Pix may be on its way (retry with the
	// same SendID; never release its money on them).
	SendPix(ctx context.Context, req PixSendRequest) (PixSendResult, error)
	// PixSendStatus reads the Pix at the PSP. ErrNotFound when the PSP
	// answers that it never received it. Any other error says nothing
	// about the Pix: ErrAcquirerUnavailable, ErrAcquirerUnauthorized,
	// ErrAcquirerNotConfigured, ErrAcquirerRejected alike.
	PixSendStatus(ctx context.Context, scope Scope, sendID string) (PixSendResult, error)
}
