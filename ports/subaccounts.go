package ports

import (
	"context"
	"time"

	"github.com/quitapix/quita/domain"
)

// SubaccountQuery selects a page of a platform's sub-accounts, newest
// first.
type SubaccountQuery struct {
	PlatformID string
	Limit      int
	// StartingAfter is the id (acct_…) of the last sub-account of the
	// previous page; ErrNotFound when it is not one of the platform's.
	StartingAfter string
}

// SubaccountStore keeps the sub-accounts of platforms: accounts whose
// ParentAccountID names their platform.
type SubaccountStore interface {
	// CreateSubaccount writes a (a sub-account, its transaction secrets
	// set) in one statement. ErrDuplicate when the id exists.
	CreateSubaccount(ctx context.Context, a domain.Account) error
	// GetSubaccount returns the sub-account id of platformID, disabled or
	// not. ErrNotFound for any other id, whoever's it is.
	GetSubaccount(ctx context.Context, platformID, id string) (*domain.Account, error)
	// ListSubaccounts returns up to q.Limit sub-accounts and whether more
	// follow.
	ListSubaccounts(ctx context.Context, q SubaccountQuery) ([]domain.Account, bool, error)
	// UpdateSubaccount locks the sub-account id of platformID, calls fn
	// with it and writes the name, e-mail, payout key and automatic payout
	// switch fn returns, in one transaction. ErrNotFound as GetSubaccount; fn's error is
	// returned and nothing is written.
	UpdateSubaccount(ctx context.Context, platformID, id string, fn func(domain.Account) (domain.Account, error)) (*domain.Account, error)
	// DisableSubaccount sets disabled_at (kept when already set) and
	// returns the sub-account. ErrNotFound as GetSubaccount.
	DisableSubaccount(ctx context.Context, platformID, id string, at time.Time) (*domain.Account, error)
	// LiveSubaccounts returns which of ids are live (not disabled)
	// sub-accounts of platformID, as a set; other ids are absent.
	LiveSubaccounts(ctx context.Context, platformID string, ids []string) (map[string]bool, error)
	// DueAutoPayouts returns up to limit live sub-accounts (of any
	// platform) with automatic payouts on whose last automatic payout day
	// is not day (a Brasília date, YYYY-MM-DD), in id order.
	DueAutoPayouts(ctx context.Context, day string, limit int) ([]domain.Account, error)
	// MarkAutoPayout records day as the sub-account id's last automatic
	// payout day, so DueAutoPayouts skips it until the next day.
	MarkAutoPayout(ctx context.Context, id, day string) error
}
