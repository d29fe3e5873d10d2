package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// ListEvents implements ports.EventOutbox: the scope's events newest first
// in write order (seq, and a row's twin just after its first event),
// walked by the index (account_id, mode, seq).
func (db *DB) ListEvents(ctx context.Context, q ports.EventQuery) (ports.EventPage, error) {
	if q.Limit < 1 || q.Limit > maxListLimit {
		return ports.EventPage{}, fmt.Errorf("store: list limit %d is outside 1..%d", q.Limit, maxListLimit)
	}
	var rows []eventRow
	sel := whereScope(db.reads().NewSelect().Model(&rows).ColumnExpr("e.*"), q.Scope) // e.* for seq, a scan-only field
	if len(q.Types) > 0 {
		sel = sel.WhereGroup(" AND ", func(q2 *bun.SelectQuery) *bun.SelectQuery {
			return q2.Where("e.type IN (?)", bun.List(q.Types)).WhereOr("e.twin_type IN (?)", bun.List(q.Types))
		})
	}
	if q.CreatedAfter != nil {
		sel = sel.Where("e.created_at >= ?", ceilDBTime(*q.CreatedAfter))
	}
	if q.CreatedBefore != nil {
		sel = sel.Where("e.created_at <= ?", newDBTime(*q.CreatedBefore))
	}
	if q.AfterSeq > 0 {
		sel = sel.Where("e.seq > ?", q.AfterSeq)
	}
	newer := q.EndingBefore != ""
	var cursor *eventPlace
	// bound applies to sel and to the scan window's query the cursor's
	// range in write order.
	bound := func(sel *bun.SelectQuery) *bun.SelectQuery { return sel }
	if id := q.StartingAfter + q.EndingBefore; id != "" {
		row, err := db.findEvent(ctx, whereScope(db.reads().NewSelect().Model((*eventRow)(nil)), q.Scope).Column("e.seq", "e.twin_id"), id)
		if err != nil {
			return ports.EventPage{}, err
		}
		cursor = &eventPlace{seq: row.Seq, twin: row.TwinID != nil && *row.TwinID == id}
		// The cursor's own row is read when the events beyond the cursor
		// include one of its two: its first event for a twin cursor going
		// older, its twin for a first-event cursor going newer.
		bound = func(sel *bun.SelectQuery) *bun.SelectQuery {
			switch {
			case newer && cursor.twin:
				return sel.Where("e.seq > ?", cursor.seq)
			case newer:
				return sel.Where("e.seq >= ?", cursor.seq)
			case cursor.twin:
				return sel.Where("e.seq <= ?", cursor.seq)
			default:
				return sel.Where("e.seq < ?", cursor.seq)
			}
		}
		sel = bound(sel)
	}
	// A filter the scope index cannot narrow (types, created_before) is
	// a row filter: the page examines at most MaxEventScan rows, from the
	// cursor on, and ends at the last of them if the filter left it short.
	var edge *eventRow
	if len(q.Types) > 0 || q.CreatedBefore != nil {
		w, err := db.scanEdge(ctx, bound(whereScope(db.reads().NewSelect().Model((*eventRow)(nil)), q.Scope)), q, newer)
		if err != nil {
			return ports.EventPage{}, err
		}
		if edge = w; edge != nil {
			if newer {
				sel = sel.Where("e.seq <= ?", edge.Seq)
			} else {
				sel = sel.Where("e.seq >= ?", edge.Seq)
			}
		}
	}
	order := "e.seq DESC"
	if newer {
		// The page just after the cursor: the oldest of the newer events,
		// shown newest first like every page.
		order = "e.seq ASC"
	}
	// Every row read holds an event the page shows but the cursor's own,
	// which may hold none: limit+2 rows hold limit+1 events when there are
	// that many.
	if err := sel.OrderExpr(order).Limit(int64(q.Limit) + 2).Scan(ctx); err != nil {
		return ports.EventPage{}, mapError(err)
	}
	out := make([]domain.Event, 0, min(len(rows)*2, q.Limit+1))
	var pair []domain.Event
	for i := range rows {
		pair = rows[i].events(pair[:0])
		for j := range pair {
			k := j
			if !newer {
				k = len(pair) - 1 - j // newest first: a twin before its first event
			}
			place := eventPlace{seq: rows[i].Seq, twin: k == 1}
			if cursor != nil && (newer && !cursor.before(place) || !newer && !place.before(*cursor)) {
				continue
			}
			if len(q.Types) > 0 && !slices.Contains(q.Types, pair[k].Type) {
				continue
			}
			out = append(out, pair[k])
		}
	}
	page := ports.EventPage{More: len(out) > q.Limit}
	out = out[:min(len(out), q.Limit)]
	switch {
	case page.More:
		page.Next = out[len(out)-1].ID // the page's far end, before it turns
	case edge != nil:
		// Short of a full page at the scan's edge: continue past the last
		// row examined, both of whose events were.
		pair := edge.events(nil)
		page.More, page.Next = true, pair[0].ID
		if newer {
			page.Next = pair[len(pair)-1].ID
		}
	}
	if newer {
		slices.Reverse(out)
	}
	page.Events = out
	return page, nil
}

// scanEdge returns the row at which a filtered page stops examining: the
// MaxEventScan-th row from the cursor in the direction asked (sel holds
// the scope and the cursor's range), or nil when fewer rows lie there. The
// place is found by an index-only scan of the scope's write-order index
// (seq alone is read), then its ids by the primary key; the created_at
// bounds are left out, so the window counts rows, not matches.
func (db *DB) scanEdge(ctx context.Context, sel *bun.SelectQuery, q ports.EventQuery, newer bool) (*eventRow, error) {
	if q.AfterSeq > 0 {
		sel = sel.Where("e.seq > ?", q.AfterSeq)
	}
	order := "e.seq DESC"
	if newer {
		order = "e.seq ASC"
	}
	scan := ports.MaxEventScan
	if db.eventScan > 0 {
		scan = db.eventScan
	}
	var seqs []int64
	if err := sel.Column("e.seq").OrderExpr(order).Offset(int64(scan-1)).Limit(1).Scan(ctx, &seqs); err != nil {
		return nil, mapError(err)
	}
	if len(seqs) == 0 {
		return nil, nil
	}
	row := &eventRow{Seq: seqs[0]}
	err := db.bun.NewSelect().Model(row).Column("e.id", "e.twin_id").Where("e.seq = ?", seqs[0]).Scan(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	row.Seq = seqs[0]
	return row, nil
}

// EventHead implements ports.EventOutbox.
func (db *DB) EventHead(ctx context.Context) (int64, error) {
	var head int64
	err := db.bun.NewSelect().Model((*eventRow)(nil)).ColumnExpr("COALESCE(MAX(e.seq), 0)").Scan(ctx, &head)
	return head, mapError(err)
}

// EventScopesSince implements ports.EventOutbox: a range scan of the
// primary key (seq) from after, grouped by scope.
func (db *DB) EventScopesSince(ctx context.Context, after int64, limit int) ([]ports.ScopeSeq, error) {
	var rows []struct {
		AccountID string `bun:"account_id"`
		Mode      string `bun:"mode"`
		Seq       int64  `bun:"seq"`
	}
	err := db.bun.NewSelect().Model((*eventRow)(nil)).ColumnExpr("e.account_id, e.mode, MAX(e.seq) AS seq").
		Where("e.seq > ?", after).GroupExpr("e.account_id, e.mode").Limit(int64(limit)).Scan(ctx, &rows)
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]ports.ScopeSeq, len(rows))
	for i, r := range rows {
		out[i] = ports.ScopeSeq{Scope: ports.Scope{AccountID: r.AccountID, Mode: domain.Mode(r.Mode)}, Seq: r.Seq}
	}
	return out, nil
}

// eventPlace is an event's place in write order: its row's seq, and
// whether it is the row's twin, which comes just after the row's first
// event.
type eventPlace struct {
	seq  int64
	twin bool
}

// before reports whether p comes before o in write order.
func (p eventPlace) before(o eventPlace) bool {
	return p.seq < o.seq || p.seq == o.seq && !p.twin && o.twin
}

// findEvent scans into q's model the row that holds event id, as its
// first event or as its twin: ErrNotFound when none does.
func (db *DB) findEvent(ctx context.Context, q *bun.SelectQuery, id string) (*eventRow, error) {
	row := new(eventRow)
	if err := q.Model(row).Where("e.id = ? OR e.twin_id = ?", id, id).Limit(1).Scan(ctx); err != nil {
		return nil, mapError(err)
	}
	return row, nil
}

// GetEvent implements ports.EventOutbox.
func (db *DB) GetEvent(ctx context.Context, scope ports.Scope, id string) (*domain.Event, error) {
	row, err := db.findEvent(ctx, whereScope(db.bun.NewSelect(), scope), id)
	if err != nil {
		return nil, err
	}
	for _, ev := range row.events(nil) {
		if ev.ID == id {
			return &ev, nil
		}
	}
	return nil, ports.ErrNotFound
}

// DeleteEventsBefore implements ports.EventOutbox. On Postgres the months
// of events wholly before t go first, each partition dropped at once
// (dropEventMonths), beyond limit; then up to limit events of the month t
// falls in (or of the DEFAULT partition), found through each partition's
// BRIN on created_at, summarised first, are deleted as rows: any limit of
// them, not the oldest limit, which would have to read and sort every
// match. An event still in the outbox stays: on Postgres every event from
// the oldest undispatched one on stays (an outbox row holds a statement's
// seqs, in order), on SQLite each outbox row is one event row. An event
// that holds an idempotency record's answer (answers_key) gives it back to
// the record first, in the same transaction, so a replay of the key still
// answers it byte for byte. A row's twin goes with it, so a limit of 1 may
// remove the two events of one row.
func (db *DB) DeleteEventsBefore(ctx context.Context, t time.Time, limit int) (int, error) {
	var n int64
	if postgres(db.bun) {
		months, err := db.dropEventMonths(ctx, t)
		if err != nil {
			return months, err
		}
		n = int64(months)
		db.summarizeBRIN(ctx, "charge_events_created_brin")
	}
	err := db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var found []eventRow
		q := tx.NewSelect().Model(&found).Column("e.seq", "e.twin_id").
			Where("e.created_at < ?", newDBTime(t)).Limit(int64(limit))
		if postgres(db.bun) {
			q = q.Where("e.seq < (SELECT coalesce(min(o.seqs[1]), 9223372036854775807) FROM event_outbox AS o)")
		} else {
			q = q.Where("NOT EXISTS (SELECT 1 FROM event_outbox AS o WHERE o.seq = e.seq)")
		}
		if err := q.Scan(ctx); err != nil || len(found) == 0 {
			return err
		}
		// Up to limit events: a row and its twin go together.
		seqs := make([]int64, 0, len(found))
		events := 0
		for _, r := range found {
			k := 1
			if r.TwinID != nil {
				k = 2
			}
			if events > 0 && events+k > limit {
				break
			}
			seqs, events = append(seqs, r.Seq), events+k
		}
		if err := returnAnswers(ctx, tx, seqs); err != nil {
			return err
		}
		// What this transaction deleted, not what it found: another
		// process's sweep may have taken some of the rows first.
		var twinned []bool
		if err := tx.NewDelete().Model((*eventRow)(nil)).Where("seq IN (?)", bun.List(seqs)).
			Returning("twin_id IS NOT NULL").Scan(ctx, &twinned); err != nil {
			return err
		}
		for _, t := range twinned {
			if n++; t {
				n++
			}
		}
		return nil
	})
	if err != nil {
		return 0, mapError(err)
	}
	return int(n), nil
}

// returnAnswers copies the answers that events of seqs hold into the
// idempotency records that name them (pointAnswer), before they go.
func returnAnswers(ctx context.Context, tx bun.Tx, seqs []int64) error {
	var holders []eventRow
	err := tx.NewSelect().Model(&holders).Column("e.id", "e.account_id", "e.mode", "e.answers_key", "e.payload").
		Where("e.seq IN (?)", bun.List(seqs)).Where("e.answers_key IS NOT NULL").Scan(ctx)
	if err != nil {
		return err
	}
	return giveBack(ctx, tx, holders)
}

// giveBack copies each holder's answer into the idempotency record that
// names it.
func giveBack(ctx context.Context, tx bun.IDB, holders []eventRow) error {
	var err error
	answers := make([][]byte, len(holders))
	for i, h := range holders {
		if answers[i], err = answerOf(h.Payload); err != nil {
			return err
		}
	}
	if postgres(tx) && len(holders) > 1 {
		return returnAnswersAtOnce(ctx, tx, holders, answers)
	}
	for i, h := range holders {
		_, err = tx.NewUpdate().Model((*idempotencyRow)(nil)).Set("body = ?", answers[i]).Set("body_event = NULL").
			Where("account_id = ?", h.AccountID).Where("mode = ?", h.Mode).Where(`"key" = ?`, *h.AnswersKey).
			Where("body_event = ?", h.ID).Exec(ctx)
		if err != nil {
			return err
		}
	}
	return nil
}

// returnAnswersAtOnce is returnAnswers' UPDATE for every holder in one
// statement on Postgres, the holders' keys and answers as arrays joined
// to the records by primary key: a sweep of a busy account's day returns
// hundreds of answers a pass, one statement where it took one each.
func returnAnswersAtOnce(ctx context.Context, tx bun.IDB, holders []eventRow, answers [][]byte) error {
	n := len(holders)
	accounts, modes, keys, events := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i, h := range holders {
		accounts[i], modes[i], keys[i], events[i] = h.AccountID, h.Mode, *h.AnswersKey, h.ID
	}
	res, err := tx.NewUpdate().Model((*idempotencyRow)(nil)).
		TableExpr("unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::bytea[]) AS d(account_id, mode, key, event, body)",
			pgdialect.Array(accounts), pgdialect.Array(modes), pgdialect.Array(keys), pgdialect.Array(events), pgdialect.Array(answers)).
		Set("body = d.body").Set("body_event = NULL").
		Where("i.account_id = d.account_id").Where("i.mode = d.mode").Where(`i."key" = d.key`).Where("i.body_event = d.event").
		Exec(ctx)
	if err != nil {
		return err
	}
	_, err = res.RowsAffected()
	return err
}
