package ports

import (
	"context"

	"github.com/quitapix/quita/domain"
)

// TransferQuery selects a page of the transfers an account sent or
// received in one mode, newest first (created_at, then id, descending).
type TransferQuery struct {
	Scope
	// Limit is 1..100.
	Limit int
	// StartingAfter is the raw id of the last transfer of the previous
	// page; ErrNotFound when it is not a transfer of the scope.
	StartingAfter string
}

// TransferStore keeps transfers between a platform and its sub-accounts
// with their events and ledger entries.
type TransferStore interface {
	// CreateTransfer inserts rec (when not nil), t, events and entries in
	// one transaction, the wallets' updates last, in walletLess order as
	// every writer takes wallet rows. ErrIdempotencyKeyExists when rec's
	// key is used; domain.ErrInsufficientBalance when the entries would
	// take a wallet below zero (checked on the locked row, whatever
	// anyone read before, so concurrent transfers never overdraw). Either
	// way nothing is written.
	CreateTransfer(ctx context.Context, t *domain.Transfer, events []domain.Event, entries []domain.JournalEntry, rec *IdempotencyRecord) error
	// Wallets returns the scope's wallets (one per currency), as committed.
	Wallets(ctx context.Context, scope Scope) ([]Wallet, error)
	// GetTransfer loads a transfer whose source or destination is the
	// scope's account, in the scope's mode. ErrNotFound for any other.
	GetTransfer(ctx context.Context, scope Scope, id string) (*domain.Transfer, error)
	// ListTransfers returns up to q.Limit transfers the scope's account
	// sent or received, and whether more follow.
	ListTransfers(ctx context.Context, q TransferQuery) ([]*domain.Transfer, bool, error)
}
