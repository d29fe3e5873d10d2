package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"

	"github.com/quitapix/quita/adapters/store/pgfast"
	"github.com/quitapix/quita/ports"
)

var (
	_ ports.UserStore       = (*DB)(nil)
	_ ports.KeyAdmin        = (*DB)(nil)
	_ ports.AuditLog        = (*DB)(nil)
	_ ports.RequestLogStore = (*DB)(nil)
	_ ports.TokenDenylist   = (*DB)(nil)
	_ ports.GuardStore      = (*DB)(nil)
)

type auditRow struct {
	bun.BaseModel `bun:"table:audit_logs,alias:al"`

	ID             string `bun:"id,pk"`
	AccountID      string `bun:"account_id"`
	UserID         string `bun:"user_id"`
	Action         string `bun:"action"`
	KeyID          string `bun:"key_id"`
	KeyFingerprint string `bun:"key_fingerprint"`
	Code           string `bun:"code"`
	CreatedAt      dbTime `bun:"created_at"`
}

func auditFromPort(e ports.AuditEntry) auditRow {
	return auditRow{ID: e.ID, AccountID: e.AccountID, UserID: e.UserID, Action: e.Action, KeyID: e.KeyID,
		KeyFingerprint: e.KeyFingerprint, Code: e.Code, CreatedAt: newDBTime(e.CreatedAt)}
}

func (r *auditRow) toPort() ports.AuditEntry {
	return ports.AuditEntry{ID: r.ID, AccountID: r.AccountID, UserID: r.UserID, Action: r.Action, KeyID: r.KeyID,
		KeyFingerprint: r.KeyFingerprint, Code: r.Code, CreatedAt: r.CreatedAt.Time}
}

type requestLogRow struct {
	bun.BaseModel `bun:"table:request_logs,alias:rl"`

	RequestID      string `bun:"request_id"`
	AccountID      string `bun:"account_id"`
	Mode           string `bun:"mode"`
	KeyFingerprint string `bun:"key_fingerprint"`
	Method         string `bun:"method"`
	Path           string `bun:"path"`
	Status         int    `bun:"status"`
	DurationMicros int64  `bun:"duration_us"`
	CreatedAt      dbTime `bun:"created_at"`
}

// requestLogColumns are request_logs' columns in requestLogRow's order,
// for COPY.
var requestLogColumns = []string{"request_id", "account_id", "mode", "key_fingerprint", "method", "path", "status",
	"duration_us", "created_at"}

type revokedTokenRow struct {
	bun.BaseModel `bun:"table:revoked_tokens,alias:rt"`

	JTI       string `bun:"jti,pk"`
	ExpiresAt dbTime `bun:"expires_at"`
}

type accountSettingsRow struct {
	bun.BaseModel `bun:"table:account_settings,alias:s"`

	AccountID          string `bun:"account_id,pk"`
	RateLimitPerSecond int    `bun:"rate_limit_per_second"`
	RateLimitBurst     int    `bun:"rate_limit_burst"`
	VelocityPerHour    int    `bun:"velocity_per_hour"`
	AmountLimit        int64  `bun:"amount_limit"`
	// CashoutPayerOnly is NULL when left to the default (by mode).
	CashoutPayerOnly *bool  `bun:"cashout_payer_only"`
	UpdatedAt        dbTime `bun:"updated_at"`
}

func toggleFromDB(b *bool) ports.Toggle {
	switch {
	case b == nil:
		return ports.ToggleDefault
	case *b:
		return ports.ToggleOn
	}
	return ports.ToggleOff
}

func toggleToDB(t ports.Toggle) *bool {
	if t == ports.ToggleDefault {
		return nil
	}
	on := t == ports.ToggleOn
	return &on
}

type blockedPayerRow struct {
	bun.BaseModel `bun:"table:blocked_payers,alias:bp"`

	AccountID string `bun:"account_id,pk"`
	Document  string `bun:"document,pk"`
	CreatedAt dbTime `bun:"created_at"`
}

// IssueAPIKey implements ports.KeyAdmin.
func (db *DB) IssueAPIKey(ctx context.Context, k ports.APIKeyRecord, audit ports.AuditEntry) error {
	return mapError(db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := insertAPIKeys(ctx, tx, k); err != nil {
			return err
		}
		return insertAudit(ctx, tx, audit)
	}))
}

// ReplaceAPIKey implements ports.KeyAdmin: the key row is locked (FOR
// UPDATE on Postgres; SQLite transactions hold the write lock), so two
// concurrent rotations of one key cannot both issue a successor.
func (db *DB) ReplaceAPIKey(ctx context.Context, accountID, keyID string, at time.Time,
	fn func(old ports.APIKeyRecord) (*ports.APIKeyRecord, []ports.AuditEntry, error),
) error {
	return mapError(db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		row := new(apiKeyRow)
		q := tx.NewSelect().Model(row).Where("k.id = ?", keyID).Where("k.account_id = ?", accountID)
		if postgres(tx) {
			q = q.For("UPDATE")
		}
		if err := q.Scan(ctx); err != nil {
			return mapError(err)
		}
		if !row.RevokedAt.IsZero() {
			return ports.ErrAPIKeyRevoked
		}
		next, audit, err := fn(row.toPort())
		if err != nil {
			return err
		}
		_, err = tx.NewUpdate().Model((*apiKeyRow)(nil)).Set("revoked_at = ?", newDBTime(at)).
			Where("k.id = ?", keyID).Where("k.account_id = ?", accountID).Exec(ctx)
		if err != nil {
			return mapError(err)
		}
		if next != nil {
			if err := insertAPIKeys(ctx, tx, *next); err != nil {
				return err
			}
		}
		return insertAudit(ctx, tx, audit...)
	}))
}

func insertAudit(ctx context.Context, idb bun.IDB, entries ...ports.AuditEntry) error {
	if len(entries) == 0 {
		return nil
	}
	rows := make([]auditRow, len(entries))
	for i, e := range entries {
		rows[i] = auditFromPort(e)
	}
	_, err := idb.NewInsert().Model(&rows).Exec(ctx)
	return mapError(err)
}

// InsertAuditEntry implements ports.AuditLog.
func (db *DB) InsertAuditEntry(ctx context.Context, e ports.AuditEntry) error {
	return insertAudit(ctx, db.bun, e)
}

// ListAuditEntries implements ports.AuditLog.
func (db *DB) ListAuditEntries(ctx context.Context, accountID string, limit int) ([]ports.AuditEntry, error) {
	var rows []auditRow
	err := db.reads().NewSelect().Model(&rows).Where("al.account_id = ?", accountID).
		OrderExpr("al.created_at DESC, al.id DESC").Limit(int64(limit)).Scan(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]ports.AuditEntry, len(rows))
	for i := range rows {
		out[i] = rows[i].toPort()
	}
	return out, nil
}

// InsertRequestLogs implements ports.RequestLogStore. The table has no
// key (migration 20261127000004): the writer sends each entry once and
// drops a batch that fails rather than retry it.
//
// On Postgres the batch goes by COPY (binary, on the main pool): one
// INSERT of a few hundred interpolated rows was ~60 KB of SQL text for
// Postgres to parse and plan every 250 ms under load, 8 ms of execution
// each.
func (db *DB) InsertRequestLogs(ctx context.Context, entries []ports.RequestLogEntry) error {
	if len(entries) == 0 {
		return nil
	}
	if db.pool != nil {
		conn, err := pgfast.AcquireWithin(ctx, db.pool, poolAcquireTimeout)
		if err != nil {
			return mapError(err)
		}
		defer conn.Release()
		_, err = conn.CopyFrom(ctx, pgx.Identifier{"request_logs"}, requestLogColumns,
			pgx.CopyFromSlice(len(entries), func(i int) ([]any, error) {
				e := &entries[i]
				return []any{e.RequestID, e.AccountID, e.Mode, e.KeyFingerprint, e.Method, e.Path, int32(e.Status),
					e.Duration.Microseconds(), e.CreatedAt.UTC().Truncate(time.Microsecond)}, nil
			}))
		return mapError(err)
	}
	rows := make([]requestLogRow, len(entries))
	for i, e := range entries {
		rows[i] = requestLogRow{RequestID: e.RequestID, AccountID: e.AccountID, Mode: e.Mode, KeyFingerprint: e.KeyFingerprint,
			Method: e.Method, Path: e.Path, Status: e.Status, DurationMicros: e.Duration.Microseconds(), CreatedAt: newDBTime(e.CreatedAt)}
	}
	_, err := db.bun.NewInsert().Model(&rows).Exec(ctx)
	return mapError(err)
}

// ListRequestLogs implements ports.RequestLogStore.
func (db *DB) ListRequestLogs(ctx context.Context, q ports.RequestLogQuery) ([]ports.RequestLogEntry, error) {
	var rows []requestLogRow
	sel := db.reads().NewSelect().Model(&rows).Where("rl.account_id = ?", q.AccountID)
	if q.KeyFingerprint != "" {
		sel = sel.Where("rl.key_fingerprint = ?", q.KeyFingerprint)
	}
	if err := sel.OrderExpr("rl.created_at DESC, rl.request_id DESC").Limit(int64(q.Limit)).Scan(ctx); err != nil {
		return nil, mapError(err)
	}
	out := make([]ports.RequestLogEntry, len(rows))
	for i, r := range rows {
		out[i] = ports.RequestLogEntry{RequestID: r.RequestID, AccountID: r.AccountID, Mode: r.Mode, KeyFingerprint: r.KeyFingerprint,
			Method: r.Method, Path: r.Path, Status: r.Status, Duration: time.Duration(r.DurationMicros) * time.Microsecond,
			CreatedAt: r.CreatedAt.Time}
	}
	return out, nil
}

// DenyToken implements ports.TokenDenylist.
func (db *DB) DenyToken(ctx context.Context, tokenID string, expiresAt time.Time) error {
	_, err := db.bun.NewInsert().Model(&revokedTokenRow{JTI: tokenID, ExpiresAt: newDBTime(expiresAt)}).
		On("CONFLICT (jti) DO NOTHING").Exec(ctx)
	return mapError(err)
}

// TokenDenied implements ports.TokenDenylist.
func (db *DB) TokenDenied(ctx context.Context, tokenID string) (bool, error) {
	ok, err := db.bun.NewSelect().Model((*revokedTokenRow)(nil)).Where("rt.jti = ?", tokenID).Exists(ctx)
	return ok, mapError(err)
}

// GetAccountSettings implements ports.GuardStore.
func (db *DB) GetAccountSettings(ctx context.Context, accountID string) (ports.AccountSettings, error) {
	row := new(accountSettingsRow)
	err := db.bun.NewSelect().Model(row).Where("s.account_id = ?", accountID).Scan(ctx)
	if err = mapError(err); errors.Is(err, ports.ErrNotFound) {
		return ports.AccountSettings{}, nil
	}
	if err != nil {
		return ports.AccountSettings{}, err
	}
	return ports.AccountSettings{RateLimitPerSecond: row.RateLimitPerSecond, RateLimitBurst: row.RateLimitBurst,
		VelocityPerHour: row.VelocityPerHour, AmountLimit: row.AmountLimit, CashoutPayerOnly: toggleFromDB(row.CashoutPayerOnly)}, nil
}

// ActiveAPIKeys implements ports.GuardStore.
func (db *DB) ActiveAPIKeys(ctx context.Context, accountID string) (int, error) {
	n, err := db.bun.NewSelect().Model((*apiKeyRow)(nil)).Where("k.account_id = ?", accountID).
		Where("k.revoked_at IS NULL").Count(ctx)
	return int(n), mapError(err)
}

// PutAccountSettings implements ports.GuardStore. ErrNotFound for an
// unknown account (the foreign key).
func (db *DB) PutAccountSettings(ctx context.Context, accountID string, s ports.AccountSettings, at time.Time) error {
	row := &accountSettingsRow{AccountID: accountID, RateLimitPerSecond: s.RateLimitPerSecond, RateLimitBurst: s.RateLimitBurst,
		VelocityPerHour: s.VelocityPerHour, AmountLimit: s.AmountLimit, CashoutPayerOnly: toggleToDB(s.CashoutPayerOnly),
		UpdatedAt: newDBTime(at)}
	_, err := db.bun.NewInsert().Model(row).
		On("CONFLICT (account_id) DO UPDATE").
		Set("rate_limit_per_second = EXCLUDED.rate_limit_per_second").
		Set("rate_limit_burst = EXCLUDED.rate_limit_burst").
		Set("velocity_per_hour = EXCLUDED.velocity_per_hour").
		Set("amount_limit = EXCLUDED.amount_limit").
		Set("cashout_payer_only = EXCLUDED.cashout_payer_only").
		Set("updated_at = EXCLUDED.updated_at").
		Exec(ctx)
	return mapError(err)
}

// PayerBlocked implements ports.GuardStore.
func (db *DB) PayerBlocked(ctx context.Context, accountID, document string) (bool, error) {
	ok, err := db.bun.NewSelect().Model((*blockedPayerRow)(nil)).
		Where("bp.account_id = ?", accountID).Where("bp.document = ?", document).Exists(ctx)
	return ok, mapError(err)
}

// BlockPayer implements ports.GuardStore.
func (db *DB) BlockPayer(ctx context.Context, accountID, document string, at time.Time) error {
	_, err := db.bun.NewInsert().Model(&blockedPayerRow{AccountID: accountID, Document: document, CreatedAt: newDBTime(at)}).
		On("CONFLICT (account_id, document) DO NOTHING").Exec(ctx)
	return mapError(err)
}

// UnblockPayer implements ports.GuardStore.
func (db *DB) UnblockPayer(ctx context.Context, accountID, document string) error {
	_, err := db.bun.NewDelete().Model((*blockedPayerRow)(nil)).
		Where("bp.account_id = ?", accountID).Where("bp.document = ?", document).Exec(ctx)
	return mapError(err)
}

var _ ports.DashboardHousekeeping = (*DB)(nil)

// DeleteExpiredTokens implements ports.DashboardHousekeeping.
func (db *DB) DeleteExpiredTokens(ctx context.Context, now time.Time, limit int) (int, error) {
	sub := db.bun.NewSelect().Model((*revokedTokenRow)(nil)).Column("rt.jti").
		Where("rt.expires_at < ?", newDBTime(now)).Limit(int64(limit))
	res, err := db.bun.NewDelete().Model((*revokedTokenRow)(nil)).Where("jti IN (?)", sub).Exec(ctx)
	if err != nil {
		return 0, mapError(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return int(n), err
	}
	m, err := db.deleteExpiredSessions(ctx, now, limit)
	return int(n) + m, err
}

// DeleteRequestLogsBefore implements ports.DashboardHousekeeping. On
// Postgres the months wholly before t go first, each partition dropped at
// once (dropRequestLogMonths), beyond limit; then up to limit rows of the
// month t falls in and of the DEFAULT partition are deleted, found
// through each partition's BRIN on created_at (summarised first), each
// partition's by their physical address (ctid, which is only unique
// within one partition; rowid on SQLite): the table has no key.
func (db *DB) DeleteRequestLogsBefore(ctx context.Context, t time.Time, limit int) (int, error) {
	if !postgres(db.bun) {
		sub := db.bun.NewSelect().Model((*requestLogRow)(nil)).ColumnExpr("rl.rowid").
			Where("rl.created_at < ?", newDBTime(t)).Limit(int64(limit))
		res, err := db.bun.NewDelete().Model((*requestLogRow)(nil)).Where("rowid IN (?)", sub).Exec(ctx)
		if err != nil {
			return 0, mapError(err)
		}
		n, err := res.RowsAffected()
		return int(n), err
	}
	n, err := db.dropRequestLogMonths(ctx, t)
	if err != nil {
		return n, err
	}
	db.summarizeBRIN(ctx, "request_logs_created_brin")
	deleted := 0
	for _, part := range []string{"request_logs_default", "request_logs_p" + t.UTC().Format("200601")} {
		if deleted >= limit {
			break
		}
		var exists bool
		if err := db.bun.NewRaw("SELECT to_regclass(?) IS NOT NULL", part).Scan(ctx, &exists); err != nil || !exists {
			if err != nil {
				return n + deleted, mapError(err)
			}
			continue
		}
		ident := quoteIdent(part)
		res, err := db.bun.NewRaw("DELETE FROM "+ident+" WHERE ctid = ANY(ARRAY(SELECT ctid FROM "+ident+
			" WHERE created_at < ? LIMIT ?))", newDBTime(t), limit-deleted).Exec(ctx)
		if err != nil {
			return n + deleted, mapError(err)
		}
		m, _ := res.RowsAffected()
		deleted += int(m)
	}
	return n + deleted, nil
}
