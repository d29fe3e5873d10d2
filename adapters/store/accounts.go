package store

import (
	"context"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// CreateAccount writes the account, its first user and its keys in one
// transaction. ErrDuplicate when the e-mail (compared without case) or a
// key's fingerprint exists.
func (db *DB) CreateAccount(ctx context.Context, a domain.Account, u ports.User, keys []ports.APIKeyRecord) error {
	return mapError(db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		row, err := db.sealedAccountRow(a)
		if err != nil {
			return err
		}
		if _, err := tx.NewInsert().Model(row).Exec(ctx); err != nil {
			return mapError(err)
		}
		if _, err := tx.NewInsert().Model(userFromPort(u)).Exec(ctx); err != nil {
			return mapError(err)
		}
		return insertAPIKeys(ctx, tx, keys...)
	}))
}

// GetAccount returns an account by id.
func (db *DB) GetAccount(ctx context.Context, id string) (*domain.Account, error) {
	row := new(accountRow)
	if err := db.bun.NewSelect().Model(row).Where("a.id = ?", id).Scan(ctx); err != nil {
		return nil, mapError(err)
	}
	return db.accountToDomain(row)
}

// accountToDomain converts a row, opening its transaction secrets.
func (db *DB) accountToDomain(r *accountRow) (*domain.Account, error) {
	a := r.toDomain()
	var err error
	if a.TransactionWebhookSecret, err = db.openSecret(transactionSecretOwner(a.ID, "live"), a.TransactionWebhookSecret); err != nil {
		return nil, err
	}
	if a.TestTransactionWebhookSecret, err = db.openSecret(transactionSecretOwner(a.ID, "test"), a.TestTransactionWebhookSecret); err != nil {
		return nil, err
	}
	return a, nil
}

// CountAccounts counts every account.
func (db *DB) CountAccounts(ctx context.Context) (int, error) {
	n, err := db.bun.NewSelect().Model((*accountRow)(nil)).Count(ctx)
	return int(n), mapError(err)
}

// SetAccountDocument implements ports.AccountStore.
func (db *DB) SetAccountDocument(ctx context.Context, id, document string) error {
	res, err := db.bun.NewUpdate().Model((*accountRow)(nil)).Set("document = ?", document).Where("a.id = ?", id).Exec(ctx)
	if err != nil {
		return mapError(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ports.ErrNotFound
	}
	return nil
}

// GetUserByEmail finds a dashboard user by e-mail, compared without case.
// ErrNotFound for an unknown address and for a user of a disabled
// sub-account.
func (db *DB) GetUserByEmail(ctx context.Context, email string) (*ports.User, error) {
	row := new(userRow)
	err := db.bun.NewSelect().Model(row).ColumnExpr("u.*").ColumnExpr(hasSecondFactor+" AS second_factor").
		Where("u.email_key = ?", emailKey(email)).
		Where("NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = u.account_id AND a.disabled_at IS NOT NULL)").Scan(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	return row.toPort(), nil
}

// LookupAPIKey finds an active key by fingerprint with its account, in one
// indexed query (it runs on every authenticated request).
//
// It reads the primary; while the primary cannot be reached (a failover)
// and there is a read replica, the replica answers, so reads through the
// replica go on authenticating. A key revoked in the replica's replay lag
// before the primary died may then pass until the new primary answers.
func (db *DB) LookupAPIKey(ctx context.Context, fingerprint string) (*ports.APIKeyRecord, *domain.Account, error) {
	lookup := func(idb bun.IDB) (*apiKeyRow, error) {
		row := new(apiKeyRow)
		err := idb.NewSelect().Model(row).Relation("Account").
			Where("k.fingerprint = ?", fingerprint).Where("k.revoked_at IS NULL").
			Scan(ctx)
		return row, mapError(err)
	}
	row, err := lookup(db.bun)
	if errors.Is(err, ports.ErrStoreUnavailable) && db.replica != nil {
		row, err = lookup(db.replica.bun)
	}
	if err != nil {
		return nil, nil, err
	}
	if row.Account == nil || row.Account.ID == "" {
		// Unreachable while the foreign key holds.
		return nil, nil, ports.ErrNotFound
	}
	key := row.toPort()
	acct, err := db.accountToDomain(row.Account)
	if err != nil {
		return nil, nil, err
	}
	return &key, acct, nil
}

// CreateAPIKey stores a new key of an existing account. ErrDuplicate when
// the fingerprint exists.
func (db *DB) CreateAPIKey(ctx context.Context, k ports.APIKeyRecord) error {
	return insertAPIKeys(ctx, db.bun, k)
}

func insertAPIKeys(ctx context.Context, idb bun.IDB, keys ...ports.APIKeyRecord) error {
	if len(keys) == 0 {
		return nil
	}
	rows := make([]apiKeyRow, len(keys))
	for i, k := range keys {
		rows[i] = apiKeyFromPort(k)
	}
	_, err := idb.NewInsert().Model(&rows).Exec(ctx)
	return mapError(err)
}

// RevokeAPIKey revokes a key of the account at the given time; the next
// LookupAPIKey on any process fails. Revoking a revoked key changes nothing
// and succeeds. ErrNotFound when the account has no such key.
func (db *DB) RevokeAPIKey(ctx context.Context, accountID, keyID string, at time.Time) error {
	return mapError(db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*apiKeyRow)(nil)).
			Set("revoked_at = ?", newDBTime(at)).
			Where("k.id = ?", keyID).Where("k.account_id = ?", accountID).Where("k.revoked_at IS NULL").
			Exec(ctx)
		if err != nil {
			return mapError(err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		exists, err := tx.NewSelect().Model((*apiKeyRow)(nil)).
			Where("k.id = ?", keyID).Where("k.account_id = ?", accountID).Exists(ctx)
		if err != nil {
			return mapError(err)
		}
		if !exists {
			return ports.ErrNotFound
		}
		return nil
	}))
}

// ListAPIKeys returns every key of the account, revoked ones included,
// newest first.
func (db *DB) ListAPIKeys(ctx context.Context, accountID string) ([]ports.APIKeyRecord, error) {
	var rows []apiKeyRow
	err := db.bun.NewSelect().Model(&rows).Where("k.account_id = ?", accountID).
		OrderExpr("k.created_at DESC, k.id DESC").Scan(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]ports.APIKeyRecord, len(rows))
	for i := range rows {
		out[i] = rows[i].toPort()
	}
	return out, nil
}
