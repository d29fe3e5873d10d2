package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/ports"
)

var _ ports.SessionStore = (*DB)(nil)

type sessionCutoffRow struct {
	bun.BaseModel `bun:"table:session_cutoffs,alias:sc"`

	UserID    string `bun:"user_id,pk"`
	NotBefore dbTime `bun:"not_before"`
}

// DenyUserTokens implements ports.TokenDenylist.
func (db *DB) DenyUserTokens(ctx context.Context, userID string, t time.Time) error {
	return mapError(denyUserTokens(ctx, db.bun, userID, t))
}

// denyUserTokens moves the user's cutoff to t, never back.
func denyUserTokens(ctx context.Context, idb bun.IDB, userID string, t time.Time) error {
	_, err := idb.NewInsert().Model(&sessionCutoffRow{UserID: userID, NotBefore: newDBTime(t)}).
		On("CONFLICT (user_id) DO UPDATE").Set("not_before = CASE WHEN EXCLUDED.not_before > sc.not_before THEN EXCLUDED.not_before ELSE sc.not_before END").
		Exec(ctx)
	return err
}

// SessionDenied implements ports.TokenDenylist.
func (db *DB) SessionDenied(ctx context.Context, tokenID, userID string, issuedAt time.Time) (bool, error) {
	var denied bool
	err := db.bun.NewSelect().ColumnExpr("EXISTS (SELECT 1 FROM revoked_tokens WHERE jti = ?) OR "+
		"EXISTS (SELECT 1 FROM session_cutoffs WHERE user_id = ? AND not_before >= ?)", tokenID, userID, newDBTime(issuedAt)).
		Scan(ctx, &denied)
	return denied, mapError(err)
}

type dashboardSessionRow struct {
	bun.BaseModel `bun:"table:dashboard_sessions,alias:ds"`

	JTI        string `bun:"jti,pk"`
	UserID     string `bun:"user_id"`
	CreatedAt  dbTime `bun:"created_at"`
	ExpiresAt  dbTime `bun:"expires_at"`
	LastSeenAt dbTime `bun:"last_seen_at"`
	UserAgent  string `bun:"user_agent"`
	Client     string `bun:"client"`
}

func (r *dashboardSessionRow) toPort() ports.SessionRecord {
	return ports.SessionRecord{TokenID: r.JTI, UserID: r.UserID, CreatedAt: r.CreatedAt.Time, ExpiresAt: r.ExpiresAt.Time,
		LastSeenAt: r.LastSeenAt.Time, UserAgent: r.UserAgent, Client: r.Client}
}

// RecordSession implements ports.SessionStore.
func (db *DB) RecordSession(ctx context.Context, s ports.SessionRecord) error {
	_, err := db.bun.NewInsert().Model(&dashboardSessionRow{JTI: s.TokenID, UserID: s.UserID, CreatedAt: newDBTime(s.CreatedAt),
		ExpiresAt: newDBTime(s.ExpiresAt), LastSeenAt: newDBTime(s.LastSeenAt), UserAgent: s.UserAgent, Client: s.Client}).Exec(ctx)
	return mapError(err)
}

// CheckSession implements ports.SessionStore: SessionDenied's test and the
// row's last_seen_at in one statement on the primary (a logout must be
// seen by the very next request).
func (db *DB) CheckSession(ctx context.Context, tokenID, userID string, issuedAt time.Time) (ports.SessionCheck, error) {
	var (
		denied   bool
		lastSeen dbTime
	)
	err := db.bun.NewSelect().
		ColumnExpr("EXISTS (SELECT 1 FROM revoked_tokens WHERE jti = ?) OR "+
			"EXISTS (SELECT 1 FROM session_cutoffs WHERE user_id = ? AND not_before >= ?)", tokenID, userID, newDBTime(issuedAt)).
		ColumnExpr("(SELECT last_seen_at FROM dashboard_sessions WHERE jti = ?)", tokenID).
		Scan(ctx, &denied, &lastSeen)
	if err != nil {
		return ports.SessionCheck{}, mapError(err)
	}
	return ports.SessionCheck{Denied: denied, Recorded: !lastSeen.IsZero(), LastSeenAt: lastSeen.Time}, nil
}

// TouchSession implements ports.SessionStore.
func (db *DB) TouchSession(ctx context.Context, tokenID string, at time.Time) error {
	_, err := db.bun.NewUpdate().Model((*dashboardSessionRow)(nil)).Set("last_seen_at = ?", newDBTime(at)).
		Where("ds.jti = ?", tokenID).Where("ds.last_seen_at < ?", newDBTime(at)).Exec(ctx)
	return mapError(err)
}

// liveSessions narrows q to the sessions that are not expired at now and
// not denied (by their jti or their user's cutoff).
func liveSessions(q *bun.SelectQuery, now time.Time) *bun.SelectQuery {
	return q.Where("ds.expires_at > ?", newDBTime(now)).
		Where("NOT EXISTS (SELECT 1 FROM revoked_tokens rt WHERE rt.jti = ds.jti)").
		Where("NOT EXISTS (SELECT 1 FROM session_cutoffs sc WHERE sc.user_id = ds.user_id AND sc.not_before >= ds.created_at)")
}

// ListSessions implements ports.SessionStore.
func (db *DB) ListSessions(ctx context.Context, userID string, now time.Time, limit int) ([]ports.SessionRecord, error) {
	var rows []dashboardSessionRow
	q := db.bun.NewSelect().Model(&rows).Where("ds.user_id = ?", userID)
	if err := liveSessions(q, now).OrderExpr("ds.created_at DESC, ds.jti DESC").Limit(int64(limit)).Scan(ctx); err != nil {
		return nil, mapError(err)
	}
	out := make([]ports.SessionRecord, len(rows))
	for i := range rows {
		out[i] = rows[i].toPort()
	}
	return out, nil
}

// GetSession implements ports.SessionStore.
func (db *DB) GetSession(ctx context.Context, userID, tokenID string) (ports.SessionRecord, error) {
	row := new(dashboardSessionRow)
	if err := db.bun.NewSelect().Model(row).Where("ds.jti = ?", tokenID).Where("ds.user_id = ?", userID).Scan(ctx); err != nil {
		return ports.SessionRecord{}, mapError(err)
	}
	return row.toPort(), nil
}

// EndOtherSessions implements ports.SessionStore. The recorded sessions
// are denied first, counting those that were still live, then the cutoff
// moves to just before keepIssuedAt, which also ends tokens issued before
// sessions were recorded.
func (db *DB) EndOtherSessions(ctx context.Context, userID, keepTokenID string, keepIssuedAt, now time.Time) (int, error) {
	var n int64
	err := db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		live := liveSessions(tx.NewSelect().Model((*dashboardSessionRow)(nil)).Column("ds.jti", "ds.expires_at").
			Where("ds.user_id = ?", userID).Where("ds.jti <> ?", keepTokenID), now)
		res, err := tx.NewRaw("INSERT INTO revoked_tokens (jti, expires_at) ? ON CONFLICT (jti) DO NOTHING", live).Exec(ctx)
		if err != nil {
			return err
		}
		if n, err = res.RowsAffected(); err != nil {
			return err
		}
		return denyUserTokens(ctx, tx, userID, keepIssuedAt.Add(-time.Microsecond))
	})
	return int(n), mapError(err)
}

// deleteExpiredSessions removes up to limit rows of sessions that expired
// before now.
func (db *DB) deleteExpiredSessions(ctx context.Context, now time.Time, limit int) (int, error) {
	sub := db.bun.NewSelect().Model((*dashboardSessionRow)(nil)).Column("ds.jti").
		Where("ds.expires_at < ?", newDBTime(now)).Limit(int64(limit))
	res, err := db.bun.NewDelete().Model((*dashboardSessionRow)(nil)).Where("jti IN (?)", sub).Exec(ctx)
	if err != nil {
		return 0, mapError(err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
