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
	// denies every session of the sub-account's dashboard users issued
	// until at (as TokenDenylist.DenyUserTokens), in one transaction, and
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

// InvitationStore keeps the invitations a platform sends for dashboard
// logins of its sub-accounts. An invitation is found by the hash of its
// token only: the token itself is never stored.
type InvitationStore interface {
	// CreateInvitation writes inv. ErrDuplicate when its id or token hash
	// exists.
	CreateInvitation(ctx context.Context, inv domain.Invitation) error
	// ListInvitations returns up to limit invitations of the sub-account
	// accountID, newest first, and whether more exist.
	ListInvitations(ctx context.Context, accountID string, limit int) ([]domain.Invitation, bool, error)
	// InvitationByToken returns the invitation whose token hashes to
	// tokenHash and its sub-account. ErrNotFound for none.
	InvitationByToken(ctx context.Context, tokenHash string) (*domain.Invitation, *domain.Account, error)
	// AcceptInvitation locks the invitation whose token hashes to
	// tokenHash, calls check with it and its sub-account as they are
	// under the lock and, when check returns nil, inserts u and marks the
	// invitation accepted by u at `at`, in one transaction. ErrNotFound
	// for no such invitation; check's error as it is; ErrDuplicate when
	// u's e-mail already has a login. Nothing is written on any error.
	AcceptInvitation(ctx context.Context, tokenHash string, u User, at time.Time, check func(domain.Invitation, domain.Account) error) error
}
