package ports

import (
	"context"

	"github.com/quitapix/quita/domain"
)

// ChargeTx reads what a change needs inside its transaction, under the
// charge's row lock.
type ChargeTx interface {
	// Balance reads the wallet of the charge's scope in cur (zero when it
	// has none yet) without locking it: the store applies entries as
	// deltas and fails with domain.ErrInsufficientBalance if one would take
	// a wallet below zero, so a debit computed from a stale read is never
	// written. Callers may retry such a failure with a fresh read.
	Balance(ctx context.Context, cur domain.Currency) (domain.Balance, error)
	// WalletOf reads, as Balance does, the wallet in cur and the
	// charge's mode of another account: one of the charge's split
	// sub-accounts, or the platform of the charge's account.
	WalletOf(ctx context.Context, accountID string, cur domain.Currency) (domain.Balance, error)
	// Platform is the platform of the charge's account when it is a
	// sub-account, "" when it is not.
	Platform(ctx context.Context) (string, error)
	// SplitDebits reads what the split reversal entries of refund
	// refundID of the locked charge took from each sub-account's wallet,
	// and what its advance took from the platform's (Advance), in the
	// order they were written; none when the refund reversed no split.
	SplitDebits(ctx context.Context, refundID string) ([]domain.SplitDebit, error)
	// GetRefund reads a refund of the locked charge. ErrNotFound when it
	// is not one of its refunds.
	GetRefund(ctx context.Context, id string) (*domain.Refund, error)
	// GetPixReturn reads the return of Pix endToEndID owed by the locked
	// charge. ErrNotFound when the charge owes none for it.
	GetPixReturn(ctx context.Context, endToEndID string) (*domain.PixReturn, error)
	// RefundDebit reads how the committed debit of refund refundID of the
	// locked charge (its entry of kind refund) was split: what it took from
	// available, from pending, and from which holds. ErrNotFound when the
	// charge has no such debit.
	RefundDebit(ctx context.Context, refundID string) (domain.RefundDebit, error)
}
