package store

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

var _ ports.InvitationStore = (*DB)(nil)

// invitationRow: see migration 20261223000010_subaccount_invitations.
type invitationRow struct {
	bun.BaseModel `bun:"table:subaccount_invitations,alias:si"`

	ID         string `bun:"id,pk"`
	AccountID  string `bun:"account_id"`
	PlatformID string `bun:"platform_id"`
	Email      string `bun:"email"`
	TokenHash  string `bun:"token_hash"`
	CreatedAt  dbTime `bun:"created_at"`
	ExpiresAt  dbTime `bun:"expires_at"`
	AcceptedAt dbTime `bun:"accepted_at"`
	UserID     string `bun:"user_id"`
}

func invitationFromDomain(i domain.Invitation) *invitationRow {
	return &invitationRow{ID: i.ID, AccountID: i.AccountID, PlatformID: i.PlatformID, Email: i.Email, TokenHash: i.TokenHash,
		CreatedAt: newDBTime(i.CreatedAt), ExpiresAt: newDBTime(i.ExpiresAt), AcceptedAt: newDBTime(deref(i.AcceptedAt)),
		UserID: i.UserID}
}

func (r *invitationRow) toDomain() domain.Invitation {
	return domain.Invitation{ID: r.ID, AccountID: r.AccountID, PlatformID: r.PlatformID, Email: r.Email, TokenHash: r.TokenHash,
		CreatedAt: r.CreatedAt.Time, ExpiresAt: r.ExpiresAt.Time, AcceptedAt: r.AcceptedAt.ptr(), UserID: r.UserID}
}

// CreateInvitation implements ports.InvitationStore.
func (db *DB) CreateInvitation(ctx context.Context, inv domain.Invitation) error {
	_, err := db.bun.NewInsert().Model(invitationFromDomain(inv)).Exec(ctx)
	return mapError(err)
}

// ListInvitations implements ports.InvitationStore.
func (db *DB) ListInvitations(ctx context.Context, accountID string, limit int) ([]domain.Invitation, bool, error) {
	if limit < 1 || limit > maxListLimit {
		return nil, false, fmt.Errorf("store: list limit %d is outside 1..%d", limit, maxListLimit)
	}
	var rows []invitationRow
	err := db.bun.NewSelect().Model(&rows).Where("si.account_id = ?", accountID).
		OrderExpr("si.created_at DESC, si.id DESC").Limit(int64(limit) + 1).Scan(ctx)
	if err != nil {
		return nil, false, mapError(err)
	}
	more := len(rows) > limit
	rows = rows[:min(len(rows), limit)]
	out := make([]domain.Invitation, len(rows))
	for i := range rows {
		out[i] = rows[i].toDomain()
	}
	return out, more, nil
}

// invitationByToken reads the invitation of tokenHash and its sub-account
// (FOR UPDATE of the invitation on Postgres when lock; SQLite's write
// transaction holds the lock already).
func (db *DB) invitationByToken(ctx context.Context, idb bun.IDB, tokenHash string, lock bool) (*domain.Invitation, *domain.Account, error) {
	row := new(invitationRow)
	q := idb.NewSelect().Model(row).Where("si.token_hash = ?", tokenHash)
	if lock && postgres(idb) {
		q = q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		return nil, nil, mapError(err)
	}
	acct := new(accountRow)
	if err := subaccountByID(idb, acct, row.PlatformID, row.AccountID, false).Scan(ctx); err != nil {
		return nil, nil, mapError(err)
	}
	sub, err := db.accountToDomain(acct)
	if err != nil {
		return nil, nil, err
	}
	inv := row.toDomain()
	return &inv, sub, nil
}

// InvitationByToken implements ports.InvitationStore.
func (db *DB) InvitationByToken(ctx context.Context, tokenHash string) (*domain.Invitation, *domain.Account, error) {
	return db.invitationByToken(ctx, db.bun, tokenHash, false)
}

// AcceptInvitation implements ports.InvitationStore. The update that
// marks the invitation accepted names it unaccepted, so of two accepts
// that raced past check only one writes.
func (db *DB) AcceptInvitation(ctx context.Context, tokenHash string, u ports.User, at time.Time,
	check func(domain.Invitation, domain.Account) error,
) error {
	return mapError(db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		inv, sub, err := db.invitationByToken(ctx, tx, tokenHash, true)
		if err != nil {
			return err
		}
		if err := check(*inv, *sub); err != nil {
			return err
		}
		if _, err := tx.NewInsert().Model(userFromPort(u)).Exec(ctx); err != nil {
			return mapError(err)
		}
		res, err := tx.NewUpdate().Model((*invitationRow)(nil)).Set("accepted_at = ?", newDBTime(at)).Set("user_id = ?", u.ID).
			Where("si.id = ?", inv.ID).Where("si.accepted_at IS NULL").Exec(ctx)
		if err != nil {
			return mapError(err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n != 1 {
			return domain.ErrInvitationUsed
		}
		return nil
	}))
}
