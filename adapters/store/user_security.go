package store

import (
	"context"
	"crypto/subtle"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/ports"
)

var _ ports.UserSecurityStore = (*DB)(nil)

type secondFactorRow struct {
	bun.BaseModel `bun:"table:user_second_factors,alias:f"`

	UserID        string `bun:"user_id,pk"`
	TOTPSecret    string `bun:"totp_secret"`
	EnabledAt     dbTime `bun:"enabled_at"`
	PendingSecret string `bun:"pending_secret"`
	PendingAt     dbTime `bun:"pending_at"`
	LastStep      int64  `bun:"last_step"`
}

type recoveryCodeRow struct {
	bun.BaseModel `bun:"table:user_recovery_codes,alias:rc"`

	UserID    string `bun:"user_id,pk"`
	CodeHash  string `bun:"code_hash,pk"`
	CreatedAt dbTime `bun:"created_at"`
	UsedAt    dbTime `bun:"used_at"`
}

// totpOwner is what a user's TOTP secrets are sealed for (secrets.go): the
// active and the pending one alike, since confirming moves one to the
// other.
func totpOwner(userID string) string { return "totp:" + userID }

// hasSecondFactor is the column GetUserByEmail reads as User.SecondFactor.
const hasSecondFactor = "EXISTS (SELECT 1 FROM user_second_factors f WHERE f.user_id = u.id AND f.totp_secret <> '')"

// GetUserSecurity implements ports.UserSecurityStore.
func (db *DB) GetUserSecurity(ctx context.Context, userID string) (*ports.User, ports.SecondFactor, error) {
	u := new(userRow)
	if err := db.bun.NewSelect().Model(u).ColumnExpr("u.*").ColumnExpr(hasSecondFactor+" AS second_factor").
		Where("u.id = ?", userID).Scan(ctx); err != nil {
		return nil, ports.SecondFactor{}, mapError(err)
	}
	f := new(secondFactorRow)
	err := db.bun.NewSelect().Model(f).Where("f.user_id = ?", userID).Scan(ctx)
	if err = mapError(err); errors.Is(err, ports.ErrNotFound) {
		return u.toPort(), ports.SecondFactor{}, nil
	}
	if err != nil {
		return nil, ports.SecondFactor{}, err
	}
	out := ports.SecondFactor{LastStep: f.LastStep, EnabledAt: f.EnabledAt.ptr()}
	if out.Secret, err = db.openSecret(totpOwner(userID), f.TOTPSecret); err != nil {
		return nil, ports.SecondFactor{}, err
	}
	if out.PendingSecret, err = db.openSecret(totpOwner(userID), f.PendingSecret); err != nil {
		return nil, ports.SecondFactor{}, err
	}
	left, err := db.bun.NewSelect().Model((*recoveryCodeRow)(nil)).Where("rc.user_id = ?", userID).Where("rc.used_at IS NULL").Count(ctx)
	if err != nil {
		return nil, ports.SecondFactor{}, mapError(err)
	}
	out.RecoveryLeft = int(left)
	return u.toPort(), out, nil
}

// SetPendingTOTP implements ports.UserSecurityStore.
func (db *DB) SetPendingTOTP(ctx context.Context, userID, secret string, at time.Time) error {
	sealed, err := db.sealSecret(totpOwner(userID), secret)
	if err != nil {
		return err
	}
	_, err = db.bun.NewInsert().Model(&secondFactorRow{UserID: userID, PendingSecret: sealed, PendingAt: newDBTime(at)}).
		On("CONFLICT (user_id) DO UPDATE").Set("pending_secret = EXCLUDED.pending_secret").Set("pending_at = EXCLUDED.pending_at").
		Exec(ctx)
	return mapError(err)
}

// EnableTOTP implements ports.UserSecurityStore: the row is locked (FOR
// UPDATE on Postgres; SQLite transactions hold the write lock) while the
// pending secret is compared, so two confirmations of one setup enable it
// once.
func (db *DB) EnableTOTP(ctx context.Context, userID, pending string, step int64, codeHashes []string, at time.Time) error {
	return mapError(db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		f := new(secondFactorRow)
		q := tx.NewSelect().Model(f).Where("f.user_id = ?", userID)
		if postgres(tx) {
			q = q.For("UPDATE")
		}
		if err := q.Scan(ctx); err != nil {
			if errors.Is(mapError(err), ports.ErrNotFound) {
				return ports.ErrTOTPNotPending
			}
			return err
		}
		stored, err := db.openSecret(totpOwner(userID), f.PendingSecret)
		if err != nil {
			return err
		}
		if stored == "" || subtle.ConstantTimeCompare([]byte(stored), []byte(pending)) != 1 {
			return ports.ErrTOTPNotPending
		}
		if _, err := tx.NewUpdate().Model((*secondFactorRow)(nil)).Set("totp_secret = pending_secret").Set("pending_secret = ''").
			Set("pending_at = NULL").Set("enabled_at = ?", newDBTime(at)).Set("last_step = ?", step).
			Where("f.user_id = ?", userID).Exec(ctx); err != nil {
			return err
		}
		if _, err := tx.NewDelete().Model((*recoveryCodeRow)(nil)).Where("rc.user_id = ?", userID).Exec(ctx); err != nil {
			return err
		}
		if len(codeHashes) == 0 {
			return nil
		}
		rows := make([]recoveryCodeRow, len(codeHashes))
		for i, h := range codeHashes {
			rows[i] = recoveryCodeRow{UserID: userID, CodeHash: h, CreatedAt: newDBTime(at)}
		}
		_, err = tx.NewInsert().Model(&rows).Exec(ctx)
		return err
	}))
}

// DisableTOTP implements ports.UserSecurityStore.
func (db *DB) DisableTOTP(ctx context.Context, userID string) error {
	return mapError(db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewDelete().Model((*recoveryCodeRow)(nil)).Where("rc.user_id = ?", userID).Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewDelete().Model((*secondFactorRow)(nil)).Where("f.user_id = ?", userID).Exec(ctx)
		return err
	}))
}

// UseTOTPStep implements ports.UserSecurityStore: one conditional UPDATE,
// so the database decides which of concurrent uses of a step wins.
func (db *DB) UseTOTPStep(ctx context.Context, userID string, step int64) (bool, error) {
	res, err := db.bun.NewUpdate().Model((*secondFactorRow)(nil)).Set("last_step = ?", step).
		Where("f.user_id = ?", userID).Where("f.last_step < ?", step).Where("f.totp_secret <> ''").Exec(ctx)
	if err != nil {
		return false, mapError(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// UseRecoveryCode implements ports.UserSecurityStore, as UseTOTPStep.
func (db *DB) UseRecoveryCode(ctx context.Context, userID, hash string, at time.Time) (bool, error) {
	res, err := db.bun.NewUpdate().Model((*recoveryCodeRow)(nil)).Set("used_at = ?", newDBTime(at)).
		Where("rc.user_id = ?", userID).Where("rc.code_hash = ?", hash).Where("rc.used_at IS NULL").Exec(ctx)
	if err != nil {
		return false, mapError(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// SetPassword implements ports.UserSecurityStore.
func (db *DB) SetPassword(ctx context.Context, email, hash string) (*ports.User, error) {
	res, err := db.bun.NewUpdate().Model((*userRow)(nil)).Set("password_hash = ?", hash).Where("u.email_key = ?", emailKey(email)).Exec(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err == nil {
			err = ports.ErrNotFound
		}
		return nil, err
	}
	row := new(userRow)
	if err := db.bun.NewSelect().Model(row).Where("u.email_key = ?", emailKey(email)).Scan(ctx); err != nil {
		return nil, mapError(err)
	}
	return row.toPort(), nil
}
