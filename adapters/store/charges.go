package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// maxListLimit bounds a page of ListCharges, as ports.ChargeQuery says.
const maxListLimit = 100

// openStatusesSQL selects open charges. It repeats the predicate of the
// partial index charges_open_expiry_idx word for word, which both planners
// need to use that index.
const openStatusesSQL = "c.status IN ('PENDING', 'WAITING_PAYMENT')"

// chargeCreate is one create's rows.
type chargeCreate struct {
	row  *chargeRow
	evs  []eventRow
	idem *idempotencyRow
	// settle: delete the key's cob intent of the charge's txid
	// (ports.IdempotencyRecord.SettlesIntent).
	settle bool
}

// CreateCharge writes the idempotency record (first, so that a concurrent
// request with the same key waits on it and fails before doing more), the
// charge and its events atomically (db.charges: on Postgres in one round
// trip with bound parameters, batched with concurrent creates; on SQLite
// in a transaction).
func (db *DB) CreateCharge(ctx context.Context, c *domain.Charge, events []domain.Event, rec *ports.IdempotencyRecord) error {
	row, err := chargeFromDomain(c.Snapshot())
	if err != nil {
		return err
	}
	cc := chargeCreate{row: row, evs: eventsFromDomain(events)}
	if rec != nil {
		cc.idem, cc.settle = idempotencyFromPort(rec), rec.SettlesIntent
		cc.pointAnswer(rec.AnswerEvent)
	}
	err = db.charges.insertCharge(ctx, cc)
	if err == nil && len(cc.evs) > 0 {
		db.signals.committed(SignalEvents)
	}
	if err == nil {
		db.signals.local(SignalStats)
	}
	return err
}

// insertCharge writes a new charge with its counter delta, its events and,
// when c.idem is not nil, its idempotency record before anything else and,
// when c.settle, the deletion of its key's cob intent (settleIntentSQL):
// at most five statements in one execBatch. On SQLite idb must be a
// transaction.
func insertCharge(ctx context.Context, idb bun.IDB, c chargeCreate) error {
	var qs []schema.QueryAppender
	if c.idem != nil {
		qs = append(qs, idb.NewInsert().Model(c.idem))
	}
	if c.settle && c.idem != nil {
		settle := idb.NewDelete().Model((*providerIntentRow)(nil)).
			Where("account_id = ?", c.idem.AccountID).Where("mode = ?", c.idem.Mode).Where("idem_key = ?", c.idem.Key)
		if c.row.PixTxID != nil { // only its own cob's (settleIntentSQL)
			settle = settle.Where("txid = ?", *c.row.PixTxID)
		}
		qs = append(qs, settle)
	}
	qs = append(qs, idb.NewInsert().Model(c.row), idb.NewInsert().Model(newChargeDelta(c.row)))
	if len(c.evs) > 0 {
		qs = append(qs, idb.NewInsert().Model(&c.evs))
	}
	return execBatch(ctx, idb, qs...)
}

// execBatch sends statements as one multi-statement query, in order. On
// Postgres that is one round trip, and atomic even outside a transaction:
// pgx sends a query without arguments by the simple query protocol, which
// runs a multi-statement query as one implicit transaction (the first
// failure rolls back all). Inside a transaction it simply joins it. On
// SQLite, only a transaction makes the statements atomic.
func execBatch(ctx context.Context, idb bun.IDB, qs ...schema.QueryAppender) error {
	b, err := appendStatements(idb, nil, qs...)
	if err != nil {
		return err
	}
	// Without arguments bun passes the text through as it is.
	_, err = idb.ExecContext(ctx, string(b))
	return mapError(err)
}

// appendStatements appends qs to b as one text, separated by semicolons.
func appendStatements(idb bun.IDB, b []byte, qs ...schema.QueryAppender) ([]byte, error) {
	gen := schema.NewQueryGen(idb.Dialect())
	var err error
	for i, q := range qs {
		if i > 0 {
			b = append(b, ";\n"...)
		}
		if b, err = q.AppendQuery(gen, b); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// GetCharge loads a charge of the scope.
func (db *DB) GetCharge(ctx context.Context, scope ports.Scope, id string) (*domain.Charge, error) {
	row, err := db.charges.chargeByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if !row.inScope(scope) {
		return nil, ports.ErrNotFound
	}
	return row.toDomain()
}

// GetChargeByID loads a charge by raw id in any scope.
func (db *DB) GetChargeByID(ctx context.Context, id string) (*domain.Charge, error) {
	row, err := selectCharge(ctx, db.bun, nil, id, false)
	if err != nil {
		return nil, err
	}
	return row.toDomain()
}

// selectCharge reads one charge, in scope unless scope is nil. forUpdate
// locks the row on Postgres; SQLite transactions already hold the database
// write lock from their BEGIN (see sqliteConnector).
func selectCharge(ctx context.Context, idb bun.IDB, scope *ports.Scope, id string, forUpdate bool) (*chargeRow, error) {
	row := new(chargeRow)
	if err := chargeByID(idb, row, id, forUpdate).Scan(ctx); err != nil {
		return nil, mapError(err)
	}
	if scope != nil && !row.inScope(*scope) {
		return nil, ports.ErrNotFound
	}
	return row, nil
}

// chargeByID is the SELECT of one charge into row by its id alone.
func chargeByID(idb bun.IDB, row *chargeRow, id string, forUpdate bool) *bun.SelectQuery {
	q := idb.NewSelect().Model(row).Where("c.id = ?", id)
	if forUpdate && postgres(idb) {
		q = q.For("UPDATE")
	}
	return q
}

// inScope reports whether the charge belongs to scope. A charge is read
// by its id alone and its scope checked here, not in the WHERE clause:
// given account and mode too, Postgres may plan the lookup on an index
// that leads with them (charges_stats_idx) and scan every charge of the
// account — which it did for every GET and update while the table's
// statistics lagged its growth (a freshly created or fast-growing table).
func (r *chargeRow) inScope(s ports.Scope) bool {
	return r.AccountID == s.AccountID && r.Mode == string(s.Mode)
}

// scopedByID reads into row (a pointer to a row struct with account_id and
// mode) the row of q's table whose id column (idCol, qualified) is id, and
// answers ports.ErrNotFound when it is not in scope. The scope is checked
// after the read, not in the WHERE clause — see chargeRow.inScope: given
// account and mode too, Postgres may choose an index that leads with them
// and scan every row of the account.
func scopedByID(ctx context.Context, q *bun.SelectQuery, idCol, id string, s ports.Scope, accountID, mode *string) error {
	if err := q.Where(idCol+" = ?", id).Scan(ctx); err != nil {
		return mapError(err)
	}
	if *accountID != s.AccountID || *mode != string(s.Mode) {
		return ports.ErrNotFound
	}
	return nil
}

func whereScope(q *bun.SelectQuery, s ports.Scope) *bun.SelectQuery {
	return q.Where("?TableAlias.account_id = ?", s.AccountID).Where("?TableAlias.mode = ?", string(s.Mode))
}

// ListCharges returns a page of the scope's charges, newest first.
func (db *DB) ListCharges(ctx context.Context, q ports.ChargeQuery) ([]*domain.Charge, bool, error) {
	return listCharges(ctx, db.reads(), q)
}

func listCharges(ctx context.Context, idb bun.IDB, q ports.ChargeQuery) ([]*domain.Charge, bool, error) {
	if q.Limit < 1 || q.Limit > maxListLimit {
		return nil, false, fmt.Errorf("store: list limit %d is outside 1..%d", q.Limit, maxListLimit)
	}
	var rows []chargeRow
	sel := whereScope(idb.NewSelect().Model(&rows), q.Scope)
	if len(q.Statuses) > 0 {
		sel = sel.Where("c.status IN (?)", bun.List(q.Statuses))
	}
	if q.CreatedAfter != nil {
		sel = sel.Where("c.created_at >= ?", ceilDBTime(*q.CreatedAfter))
	}
	if q.CreatedBefore != nil {
		sel = sel.Where("c.created_at <= ?", newDBTime(*q.CreatedBefore))
	}
	if q.CustomerDocument != "" {
		// A document that normalises to nothing matches no charge, not
		// the charges without a document.
		sel = sel.Where("c.customer_document_norm = ?", domain.NormalizeTaxID(q.CustomerDocument)).
			Where("c.customer_document_norm <> ''")
	}
	if q.StartingAfter != "" {
		cur := new(chargeRow)
		err := scopedByID(ctx, idb.NewSelect().Model(cur).Column("account_id", "mode", "created_at"), "c.id", q.StartingAfter,
			q.Scope, &cur.AccountID, &cur.Mode)
		if err != nil {
			return nil, false, err
		}
		sel = sel.Where("(c.created_at, c.id) < (?, ?)", cur.CreatedAt, q.StartingAfter)
	}
	err := sel.OrderExpr("c.created_at DESC, c.id DESC").Limit(int64(q.Limit) + 1).Scan(ctx)
	if err != nil {
		return nil, false, mapError(err)
	}
	hasMore := len(rows) > q.Limit
	rows = rows[:min(len(rows), q.Limit)]
	out := make([]*domain.Charge, len(rows))
	for i := range rows {
		if out[i], err = rows[i].toDomain(); err != nil {
			return nil, false, err
		}
	}
	return out, hasMore, nil
}

// ListOpenExpired returns open charges whose expiry is at or before now,
// earliest expiry first.
func (db *DB) ListOpenExpired(ctx context.Context, now time.Time, limit int) ([]ports.ChargeRef, error) {
	return listChargeRefs(ctx, db.bun, limit, func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where(openStatusesSQL).Where("c.expires_at <= ?", newDBTime(now)).OrderExpr("c.expires_at, c.id")
	})
}

// ListOverdueNotices returns charges whose charge.overdue is due at now,
// earliest first, from the partial index on overdue_at.
func (db *DB) ListOverdueNotices(ctx context.Context, now time.Time, limit int) ([]ports.ChargeRef, error) {
	return listChargeRefs(ctx, db.bun, limit, func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.Where("c.overdue_at IS NOT NULL").Where("c.overdue_at <= ?", newDBTime(now)).OrderExpr("c.overdue_at, c.id")
	})
}

func listChargeRefs(ctx context.Context, idb bun.IDB, limit int, filter func(*bun.SelectQuery) *bun.SelectQuery) ([]ports.ChargeRef, error) {
	if limit < 1 {
		return nil, errors.New("store: limit must be positive")
	}
	var rows []chargeRow
	q := idb.NewSelect().Model(&rows).Column("id", "account_id", "mode").Limit(int64(limit))
	if err := filter(q).Scan(ctx); err != nil {
		return nil, mapError(err)
	}
	refs := make([]ports.ChargeRef, len(rows))
	for i, r := range rows {
		refs[i] = ports.ChargeRef{Scope: ports.Scope{AccountID: r.AccountID, Mode: domain.Mode(r.Mode)}, ID: r.ID}
	}
	return refs, nil
}

// ListChargeEvents returns a charge's outbox events in the order written
// (a row's twin just after its first event).
func (db *DB) ListChargeEvents(ctx context.Context, scope ports.Scope, chargeID string) ([]domain.Event, error) {
	var rows []eventRow
	err := whereScope(db.bun.NewSelect().Model(&rows), scope).
		Where("e.charge_id = ?", chargeID).OrderExpr("e.seq").Scan(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]domain.Event, 0, len(rows))
	for i := range rows {
		out = rows[i].events(out)
	}
	return out, nil
}

// GetIdempotencyRecord returns the record of a used key.
func (db *DB) GetIdempotencyRecord(ctx context.Context, key ports.IdempotencyKey) (*ports.IdempotencyRecord, error) {
	return db.charges.idempotencyRecord(ctx, key)
}
