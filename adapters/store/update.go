package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// chargeTx is ports.ChargeTx inside UpdateCharge's transaction.
type chargeTx struct {
	tx       bun.IDB
	scope    ports.Scope
	chargeID string
	// w, in UpdateCharges, is the batch: what the changes made earlier in
	// the same transaction will add to each wallet, and the wallets it has
	// read. Balance reads include the former and read each wallet once.
	w *changeWriter
}

func (t *chargeTx) Balance(ctx context.Context, cur domain.Currency) (domain.Balance, error) {
	return t.WalletOf(ctx, t.scope.AccountID, cur)
}

// WalletOf implements ports.ChargeTx: Balance of another account's
// wallet in the charge's mode.
func (t *chargeTx) WalletOf(ctx context.Context, accountID string, cur domain.Currency) (domain.Balance, error) {
	k := domain.WalletKey{AccountID: accountID, Mode: t.scope.Mode, Currency: cur}
	b, ok := t.w.read[k]
	if !ok {
		row := &balanceRow{AccountID: accountID, Mode: string(t.scope.Mode), Currency: string(cur)}
		err := t.tx.NewSelect().Model(row).WherePK().Scan(ctx)
		if err != nil && !errors.Is(mapError(err), ports.ErrNotFound) {
			return domain.Balance{}, mapError(err)
		}
		b = domain.Balance{Currency: cur, Available: row.Available, Pending: row.Pending, Owed: row.Owed}
		t.w.read[k] = b
	}
	if d := t.w.wallets[k]; d != nil {
		b.Available += d.Available
		b.Pending += d.Pending
		b.Owed += d.Owed
	}
	return b, nil
}

// UpdateCharge runs fn on the locked charge and writes the charge, its
// events, ledger entries (with balances and holds), refunds, Pix returns
// and idempotency record in one transaction. fn's error is returned exactly
// as fn returned it.
func (db *DB) UpdateCharge(ctx context.Context, scope ports.Scope, id string, fn ports.ChargeChangeFunc) error {
	errs, err := db.UpdateCharges(ctx, []ports.ChargeRef{{Scope: scope, ID: id}}, fn)
	if err != nil {
		return err
	}
	return errs[0]
}

// errNothingToWrite rolls back a transaction in which every fn failed.
var errNothingToWrite = errors.New("store: nothing to write")

// UpdateCharges implements ports.PaymentStore: UpdateCharge for several
// charges in one transaction. The charges are locked in id order by one
// statement; the counters, per-day totals and wallets they share are
// written once each, in key order, so two batches never wait on each
// other's rows in opposite orders.
func (db *DB) UpdateCharges(ctx context.Context, refs []ports.ChargeRef, fn ports.ChargeChangeFunc) ([]error, error) {
	order := make([]int, len(refs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(refs[a].ID, refs[b].ID) })
	ids := make([]string, len(refs))
	for i, k := range order {
		ids[i] = refs[k].ID
		if i > 0 && ids[i] == ids[i-1] {
			return nil, fmt.Errorf("store: charge %s named twice in one UpdateCharges", ids[i])
		}
	}
	var (
		errs            []error
		events, refunds bool // committed: wake their workers (signals.go)
	)
	err := db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		errs = make([]error, len(refs))
		var rows []chargeRow
		q := tx.NewSelect().Model(&rows).Where("c.id IN (?)", bun.List(ids)).OrderExpr("c.id")
		if postgres(tx) {
			q = q.For("UPDATE")
		}
		if err := q.Scan(ctx); err != nil {
			return mapError(err)
		}
		byID := make(map[string]*chargeRow, len(rows))
		for i := range rows {
			byID[rows[i].ID] = &rows[i]
		}
		w := newChangeWriter(tx)
		for _, k := range order {
			ref := refs[k]
			row := byID[ref.ID]
			if row == nil || row.AccountID != ref.AccountID || row.Mode != string(ref.Mode) {
				errs[k] = ports.ErrNotFound
				continue
			}
			c, err := row.toDomain()
			if err != nil {
				return err
			}
			change, err := fn(ctx, c, &chargeTx{tx: tx, scope: ref.Scope, chargeID: ref.ID, w: w})
			if err != nil {
				errs[k] = err
				continue
			}
			if err := w.add(row, c, change); err != nil {
				return err
			}
		}
		if w.empty() {
			return errNothingToWrite
		}
		qs, err := w.statements(ctx)
		if err != nil {
			return err
		}
		// Only refunds left open are work for the refund worker: its own
		// final steps wake nobody.
		events = len(w.events) > 0
		refunds = slices.ContainsFunc(w.refunds, func(r domain.Refund) bool { return !r.Status.Final() })
		return execBatch(ctx, tx, qs...)
	})
	if err != nil && !errors.Is(err, errNothingToWrite) {
		return nil, mapError(err)
	}
	if err == nil && events {
		db.signals.committed(SignalEvents)
	}
	if err == nil && refunds {
		db.signals.committed(SignalRefunds)
	}
	if err == nil {
		db.signals.local(SignalStats)
	}
	return errs, nil
}

// changeWriter gathers the changes of the charges of one UpdateCharges
// transaction into one batch of statements.
type changeWriter struct {
	tx      bun.IDB
	idem    []schema.QueryAppender
	charges []schema.QueryAppender
	days    map[dayKey]*dayDelta
	events  []eventRow
	refunds []domain.Refund
	returns []domain.PixReturn
	entries []domain.JournalEntry
	// wallets is what entries will add to each wallet, for Balance reads
	// of the changes that follow; read is each wallet as first read.
	wallets map[domain.WalletKey]*domain.Balance
	read    map[domain.WalletKey]domain.Balance
}

// dayKey is one group of the counters: an account's charges of a day,
// currency, status and method.
type dayKey struct {
	accountID, mode string
	dayTotalKey
}

type dayDelta struct{ n, volume, refunded int64 }

func newChangeWriter(tx bun.IDB) *changeWriter {
	return &changeWriter{tx: tx, days: map[dayKey]*dayDelta{},
		wallets: map[domain.WalletKey]*domain.Balance{}, read: map[domain.WalletKey]domain.Balance{}}
}

func (w *changeWriter) empty() bool { return len(w.charges) == 0 }

// add takes in the change of one charge: old is its row as locked, c the
// charge fn changed.
func (w *changeWriter) add(old *chargeRow, c *domain.Charge, change ports.ChargeChange) error {
	s := c.Snapshot()
	if s.ID != old.ID || s.AccountID != old.AccountID || string(s.Mode) != old.Mode {
		return fmt.Errorf("store: update of charge %s changed its identity", old.ID)
	}
	upd, err := chargeFromDomain(s)
	if err != nil {
		return err
	}
	if change.Idempotency != nil {
		w.idem = append(w.idem, w.tx.NewInsert().Model(idempotencyFromPort(change.Idempotency)))
	}
	w.charges = append(w.charges, w.tx.NewUpdate().Model(upd).ExcludeColumn(chargeImmutableColumns...).WherePK())
	from, to := dayTotalKeyOf(old, old.CreatedAt), dayTotalKeyOf(upd, old.CreatedAt)
	w.day(old, from, 0, -old.Amount, -old.RefundCompleted)
	w.day(old, to, 0, upd.Amount, upd.RefundCompleted)
	if from != to {
		w.day(old, from, -1, 0, 0)
		w.day(old, to, 1, 0, 0)
	}
	w.events = append(w.events, eventsFromDomain(change.Events)...)
	w.refunds = append(w.refunds, change.Refunds...)
	w.returns = append(w.returns, change.Returns...)
	w.entries = append(w.entries, change.Entries...)
	for _, e := range change.Entries {
		for _, p := range e.Postings {
			if !domain.WalletAccount(p.Account) {
				continue
			}
			k := domain.WalletKey{AccountID: e.AccountID, Mode: e.Mode, Currency: p.Currency}
			d := w.wallets[k]
			if d == nil {
				d = &domain.Balance{}
				w.wallets[k] = d
			}
			d.Apply(p)
		}
	}
	return nil
}

func (w *changeWriter) day(r *chargeRow, k dayTotalKey, n, volume, refunded int64) {
	key := dayKey{r.AccountID, r.Mode, k}
	d := w.days[key]
	if d == nil {
		d = &dayDelta{}
		w.days[key] = d
	}
	d.n, d.volume, d.refunded = d.n+n, d.volume+volume, d.refunded+refunded
}

// statements is the batch: idempotency records first (a used key fails
// before anything else is written), then the charges, their counter
// deltas (insert-only: no row another writer shares), events, refunds,
// returns, and the ledger last, the wallet updates last of all, so the
// rows every writer of an account shares are held from there to the
// commit only.
func (w *changeWriter) statements(ctx context.Context) ([]schema.QueryAppender, error) {
	qs := append(w.idem, w.charges...)
	var deltas []statDeltaRow
	for k, d := range w.days {
		if *d != (dayDelta{}) {
			deltas = append(deltas, statDeltaRow{AccountID: k.accountID, Mode: k.mode, Day: k.day, Currency: k.currency,
				Status: k.status, PaidWith: k.paidWith, N: d.n, Volume: d.volume, Refunded: d.refunded})
		}
	}
	if len(deltas) > 0 {
		qs = append(qs, w.tx.NewInsert().Model(&deltas))
	}
	if len(w.events) > 0 {
		qs = append(qs, w.tx.NewInsert().Model(&w.events))
	}
	qs = append(qs, refundUpserts(w.tx, w.refunds)...)
	qs = append(qs, pixReturnUpserts(w.tx, w.returns)...)
	ledger, err := entryStatements(ctx, w.tx, w.entries)
	if err != nil {
		return nil, err
	}
	return append(qs, ledger...), nil
}
