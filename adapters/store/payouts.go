package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/groupcommit"
	"github.com/quitapix/quita/ports"
)

var _ ports.PayoutStore = (*DB)(nil)

// payoutRow is a row of the payouts table. Every statement on that table
// is in this file.
type payoutRow struct {
	bun.BaseModel `bun:"table:payouts,alias:po"`

	ID             string `bun:"id,pk"`
	AccountID      string `bun:"account_id"`
	Mode           string `bun:"mode"`
	Amount         int64  `bun:"amount"`
	Fee            int64  `bun:"fee"`
	Currency       string `bun:"currency"`
	Status         string `bun:"status"`
	KeyType        string `bun:"key_type"`
	PixKey         string `bun:"pix_key"`
	Description    string `bun:"description"`
	Metadata       string `bun:"metadata"` // JSON
	SendID         string `bun:"send_id"`
	EndToEndID     string `bun:"end_to_end_id"`
	FailureCode    string `bun:"failure_code"`
	FailureMessage string `bun:"failure_message"`
	CreatedAt      dbTime `bun:"created_at"`
	UpdatedAt      dbTime `bun:"updated_at"`
	PaidAt         dbTime `bun:"paid_at"`
	FailedAt       dbTime `bun:"failed_at"`
	CancelledAt    dbTime `bun:"cancelled_at"`
	LeaseUntil     dbTime `bun:"lease_until"`
}

func payoutFromDomain(p *domain.Payout) (*payoutRow, error) {
	s := p.Snapshot()
	meta, err := json.Marshal(s.Metadata)
	if err != nil {
		return nil, fmt.Errorf("store: payout metadata: %w", err)
	}
	if s.Metadata == nil {
		meta = []byte("{}")
	}
	return &payoutRow{ID: s.ID, AccountID: s.AccountID, Mode: string(s.Mode), Amount: s.Amount, Fee: s.Fee,
		Currency: string(s.Currency), Status: string(s.Status), KeyType: string(s.Key.Type), PixKey: s.Key.Value,
		Description: s.Description, Metadata: string(meta), SendID: s.SendID, EndToEndID: s.EndToEndID,
		FailureCode: s.FailureCode, FailureMessage: s.FailureMessage, CreatedAt: newDBTime(s.CreatedAt),
		UpdatedAt: newDBTime(s.UpdatedAt), PaidAt: newDBTime(s.PaidAt), FailedAt: newDBTime(s.FailedAt),
		CancelledAt: newDBTime(s.CancelledAt)}, nil
}

func (r *payoutRow) toDomain() (*domain.Payout, error) {
	var meta map[string]any
	if err := json.Unmarshal([]byte(r.Metadata), &meta); err != nil {
		return nil, fmt.Errorf("store: payout %s metadata: %w", r.ID, err)
	}
	return domain.UnmarshalPayoutFromStorage(domain.PayoutSnapshot{ID: r.ID, AccountID: r.AccountID, Mode: domain.Mode(r.Mode),
		Amount: r.Amount, Fee: r.Fee, Currency: domain.Currency(r.Currency), Status: domain.PayoutStatus(r.Status),
		Key: domain.PixKey{Type: domain.PixKeyType(r.KeyType), Value: r.PixKey}, Description: r.Description, Metadata: meta,
		SendID: r.SendID, EndToEndID: r.EndToEndID, FailureCode: r.FailureCode, FailureMessage: r.FailureMessage,
		CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time, PaidAt: r.PaidAt.Time, FailedAt: r.FailedAt.Time,
		CancelledAt: r.CancelledAt.Time}), nil
}

// CreatePayout implements ports.PayoutStore: the idempotency record, the
// payout, its events, and the ledger statements with the wallet's
// conditional update last. On Postgres that is one multi-statement query —
// one round trip, its own implicit transaction — so the wallet row every
// payout of the account updates is held from its update to the commit
// only, not across another round trip; and concurrent payouts share that
// query (db.payouts, internal/groupcommit): one commit, one WAL flush for
// many, so one account's payouts do not go one flush at a time, each
// holding the wallet row through a flush of its own.
func (db *DB) CreatePayout(ctx context.Context, p *domain.Payout, events []domain.Event, entries []domain.JournalEntry, rec *ports.IdempotencyRecord) error {
	row, err := payoutFromDomain(p)
	if err != nil {
		return err
	}
	if db.payouts != nil && !readsHolds(entries) { // Postgres
		c := payoutCreate{wallet: row.walletKey()}
		if c.sql, err = payoutSQL(ctx, db.bun, row, events, entries, rec); err != nil {
			return err
		}
		_, err = db.payouts.Do(ctx, c)
	} else {
		err = mapError(db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			// On SQLite, or when the entries read the holds first
			// (entryStatements), the statements are built in the
			// transaction.
			sql, err := payoutSQL(ctx, tx, row, events, entries, rec)
			if err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, string(sql))
			return err
		}))
	}
	if err != nil {
		return err
	}
	db.signals.committed(SignalPayouts)
	if len(events) > 0 {
		db.signals.committed(SignalEvents)
	}
	return nil
}

// payoutCreate is one payout's writes as CreatePayout built them, and
// the wallet they debit.
type payoutCreate struct {
	wallet domain.WalletKey
	sql    []byte
}

// payoutSQL is a payout's statements as one text: the idempotency record
// (when rec is not nil), the payout, its events and its ledger
// statements, the wallet's conditional update last. The caller builds it
// in its own goroutine, so a batch's one flight only joins the texts.
func payoutSQL(ctx context.Context, idb bun.IDB, row *payoutRow, events []domain.Event, entries []domain.JournalEntry, rec *ports.IdempotencyRecord) ([]byte, error) {
	var qs []schema.QueryAppender
	if rec != nil {
		qs = append(qs, idb.NewInsert().Model(idempotencyFromPort(rec)))
	}
	qs = append(qs, idb.NewInsert().Model(row))
	if evs := eventsFromDomain(events); len(evs) > 0 {
		qs = append(qs, idb.NewInsert().Model(&evs))
	}
	ledger, err := entryStatements(ctx, idb, entries)
	if err != nil {
		return nil, err
	}
	return appendStatements(idb, nil, append(qs, ledger...)...)
}

// insertPayouts writes payouts as one multi-statement query on Postgres:
// one implicit transaction, so the first failure (a wallet's
// non-negative check, a repeated key) rolls back all, and the group
// then runs each alone for its own outcome. The payouts go in the order
// of their wallets (account, mode, currency; arrival order within one):
// every writer takes wallet rows in that order (walletLess), so two
// batches never wait on each other's wallets in a cycle.
func (db *DB) insertPayouts(ctx context.Context, cs []payoutCreate, _ []groupcommit.Result[struct{}]) error {
	cs = slices.Clone(cs)
	slices.SortStableFunc(cs, func(a, b payoutCreate) int {
		switch {
		case walletLess(a.wallet, b.wallet):
			return -1
		case walletLess(b.wallet, a.wallet):
			return 1
		}
		return 0
	})
	n := 0
	for _, c := range cs {
		n += len(c.sql) + 2
	}
	sql := make([]byte, 0, n)
	for i, c := range cs {
		if i > 0 {
			sql = append(sql, ";\n"...)
		}
		sql = append(sql, c.sql...)
	}
	_, err := db.bun.ExecContext(ctx, string(sql))
	return mapError(err)
}

func (db *DB) insertPayout(ctx context.Context, c payoutCreate) (struct{}, error) {
	return struct{}{}, db.insertPayouts(ctx, []payoutCreate{c}, nil)
}

func (r *payoutRow) walletKey() domain.WalletKey {
	return domain.WalletKey{AccountID: r.AccountID, Mode: domain.Mode(r.Mode), Currency: domain.Currency(r.Currency)}
}

// readsHolds reports whether applying entries reads (and locks) the
// wallet's holds first — a debit of pending other than a release — which
// needs an explicit transaction. A payout's entry never does.
func readsHolds(entries []domain.JournalEntry) bool {
	for _, e := range entries {
		for _, p := range e.Postings {
			if p.Account == domain.LedgerPending && p.Amount < 0 && e.Kind != domain.EntryRelease {
				return true
			}
		}
	}
	return false
}

// GetPayout implements ports.PayoutStore.
func (db *DB) GetPayout(ctx context.Context, scope ports.Scope, id string) (*domain.Payout, error) {
	row := new(payoutRow)
	if err := scopedByID(ctx, db.bun.NewSelect().Model(row), "po.id", id, scope, &row.AccountID, &row.Mode); err != nil {
		return nil, err
	}
	return row.toDomain()
}

// UpdatePayout implements ports.PayoutStore: UpdatePayouts of one.
func (db *DB) UpdatePayout(ctx context.Context, scope ports.Scope, id string, fn ports.PayoutChangeFunc) error {
	errs, err := db.UpdatePayouts(ctx, []ports.PayoutRef{{Scope: scope, ID: id}}, fn)
	if err != nil {
		return err
	}
	return errs[0]
}

// UpdatePayouts implements ports.PayoutStore. The rows are locked by one
// SELECT (FOR UPDATE, in id order, on Postgres; SQLite's transaction holds
// the write lock), and the updates, every event (one INSERT) and the
// ledger statements of all the changes go as one text: a claim of the
// payout worker costs one transaction and one commit, not one per payout
// (the worker's steps would otherwise take more of the machine than the
// creates they follow).
func (db *DB) UpdatePayouts(ctx context.Context, refs []ports.PayoutRef, fn ports.PayoutChangeFunc) ([]error, error) {
	if len(refs) == 0 {
		return []error{}, nil
	}
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = r.ID
	}
	if len(slices.Compact(slices.Sorted(slices.Values(ids)))) != len(ids) {
		return nil, fmt.Errorf("store: UpdatePayouts names a payout twice")
	}
	var (
		errs   []error
		events bool
	)
	err := db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		errs, events = make([]error, len(refs)), false
		var rows []payoutRow
		q := tx.NewSelect().Model(&rows).Where("po.id IN (?)", bun.List(ids)).OrderExpr("po.id")
		if postgres(tx) {
			q = q.For("UPDATE")
		}
		if err := q.Scan(ctx); err != nil {
			return err
		}
		byID := make(map[string]*payoutRow, len(rows))
		for i := range rows {
			byID[rows[i].ID] = &rows[i]
		}
		var (
			qs      []schema.QueryAppender
			evs     []eventRow
			entries []domain.JournalEntry
		)
		for i, ref := range refs {
			row := byID[ref.ID]
			if row == nil || row.AccountID != ref.AccountID || row.Mode != string(ref.Mode) {
				errs[i] = ports.ErrNotFound
				continue
			}
			upd, change, err := changePayout(ctx, row, fn)
			if err != nil {
				if errors.Is(err, errPayoutIdentity) {
					return err
				}
				errs[i] = err
				continue
			}
			qs = append(qs, tx.NewUpdate().Model(upd).
				Column("status", "end_to_end_id", "failure_code", "failure_message", "updated_at", "paid_at", "failed_at",
					"cancelled_at", "lease_until").WherePK())
			evs = append(evs, eventsFromDomain(change.Events)...)
			entries = append(entries, change.Entries...)
		}
		if len(qs) == 0 {
			return nil
		}
		if len(evs) > 0 {
			qs = append(qs, tx.NewInsert().Model(&evs))
			events = true
		}
		ledger, err := entryStatements(ctx, tx, entries)
		if err != nil {
			return err
		}
		return execBatch(ctx, tx, append(qs, ledger...)...)
	})
	if err != nil {
		return nil, mapError(err)
	}
	if events {
		db.signals.committed(SignalEvents) // the payouts' webhooks go out now, not at the next safety poll
	}
	return errs, nil
}

// errPayoutIdentity is a change that touched what a payout's update may
// never change: a bug, so it fails the whole transaction.
var errPayoutIdentity = errors.New("store: an update of a payout changed its identity or money")

// changePayout calls fn on row's payout and returns the row to save with
// fn's change (its lease moved to the change's RecheckAt when set), or
// fn's error as is.
func changePayout(ctx context.Context, row *payoutRow, fn ports.PayoutChangeFunc) (*payoutRow, ports.PayoutChange, error) {
	p, err := row.toDomain()
	if err != nil {
		return nil, ports.PayoutChange{}, err
	}
	change, err := fn(ctx, p)
	if err != nil {
		return nil, ports.PayoutChange{}, err
	}
	upd, err := payoutFromDomain(p)
	if err != nil {
		return nil, ports.PayoutChange{}, err
	}
	if upd.ID != row.ID || upd.AccountID != row.AccountID || upd.Mode != row.Mode || upd.Amount != row.Amount ||
		upd.Fee != row.Fee || upd.SendID != row.SendID {
		return nil, ports.PayoutChange{}, fmt.Errorf("%w: payout %s", errPayoutIdentity, row.ID)
	}
	upd.LeaseUntil = row.LeaseUntil
	if !change.RecheckAt.IsZero() {
		upd.LeaseUntil = newDBTime(change.RecheckAt)
	}
	return upd, change, nil
}

// ListPayouts implements ports.PayoutStore.
func (db *DB) ListPayouts(ctx context.Context, q ports.PayoutQuery) ([]*domain.Payout, bool, error) {
	if q.Limit < 1 || q.Limit > maxListLimit {
		return nil, false, fmt.Errorf("store: list limit %d is outside 1..%d", q.Limit, maxListLimit)
	}
	var rows []payoutRow
	sel := whereScope(db.reads().NewSelect().Model(&rows), q.Scope)
	if len(q.Statuses) > 0 {
		sel = sel.Where("po.status IN (?)", bun.List(q.Statuses))
	}
	if q.StartingAfter != "" {
		cur := new(payoutRow)
		err := scopedByID(ctx, db.reads().NewSelect().Model(cur).Column("account_id", "mode", "created_at"), "po.id",
			q.StartingAfter, q.Scope, &cur.AccountID, &cur.Mode)
		if err != nil {
			return nil, false, err
		}
		sel = sel.Where("(po.created_at, po.id) < (?, ?)", cur.CreatedAt, q.StartingAfter)
	}
	if err := sel.OrderExpr("po.created_at DESC, po.id DESC").Limit(int64(q.Limit) + 1).Scan(ctx); err != nil {
		return nil, false, mapError(err)
	}
	more := len(rows) > q.Limit
	rows = rows[:min(len(rows), q.Limit)]
	out := make([]*domain.Payout, len(rows))
	for i := range rows {
		p, err := rows[i].toDomain()
		if err != nil {
			return nil, false, err
		}
		out[i] = p
	}
	return out, more, nil
}
