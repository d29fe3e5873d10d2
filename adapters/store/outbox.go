package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

type outboxRow struct {
	eventRow   `bun:",extend"`
	WebhookURL *string `bun:"webhook_url,scanonly"`
}

// outboxClaim is a row of event_outbox: events not dispatched yet. On
// Postgres a statement trigger on charge_events adds one row per statement
// that writes events, holding their seqs in order (migration
// 20261127000003); on SQLite a row trigger adds one row per event, read
// here as a row of one seq. The dispatcher deletes the row in the
// transaction that fans its events out (docs/webhooks.md, "The outbox").
type outboxClaim struct {
	ID   int64   `bun:"id"`
	Seqs []int64 `bun:"seqs,array"`
}

// outboxClaimQuery selects the oldest outbox rows that hold the first
// limit undispatched events — on Postgres the rows up to the first whose
// events reach limit, counted over the oldest limit rows whether another
// dispatcher holds them or not, and locked, skipping those it holds. (A
// second dispatcher therefore waits for the first's pass rather than take
// the rows after it; one pass carries up to limit events.)
func outboxClaimQuery(db bun.IDB, claims *[]outboxClaim, limit int) *bun.SelectQuery {
	if !postgres(db) {
		return db.NewSelect().Model(claims).ModelTableExpr("event_outbox AS o").
			ColumnExpr("o.seq AS id").OrderExpr("o.seq").Limit(int64(limit))
	}
	return db.NewSelect().Model(claims).ModelTableExpr("event_outbox AS o").ColumnExpr("o.id, o.seqs").
		Where(`o.id <= (SELECT max(w.id) FROM (
			SELECT f.id, sum(cardinality(f.seqs)) OVER (ORDER BY f.id) - cardinality(f.seqs) AS before
			FROM (SELECT id, seqs FROM event_outbox ORDER BY id LIMIT ?) AS f) AS w WHERE w.before < ?)`, limit, limit).
		OrderExpr("o.id").For("UPDATE SKIP LOCKED")
}

// outboxEventsQuery selects the events of seqs in no particular order,
// each legacy event with its charge's webhook URL (the only events that URL
// receives), and each event's payload only when it may be delivered: its
// scope has an ACTIVE endpoint, or it is a legacy event whose charge has a
// URL. On Postgres the seqs are one array joined by primary key: a list of
// 500 literals takes 2.7 ms to plan, the array 0.9 ms.
//
// Most events go to no endpoint and no URL, and reading their payloads
// (two ~1.2 KB envelopes per create, decoded here and thrown away) would
// take a tenth of Postgres's time in the create benchmark; so would
// joining every event to its charge for a URL only legacy events use. On
// Postgres a legacy event's charge is read once for both.
// Deciding per event here keeps the deliveries' payloads in the same
// read, which reading them in a second query cost the delivery benchmark.
func outboxEventsQuery(db bun.IDB, rows *[]outboxRow, seqs []int64) *bun.SelectQuery {
	legacy := bun.List(legacyEventTypes)
	const hasEndpoint = `EXISTS (SELECT 1 FROM webhook_endpoints AS we WHERE we.account_id = e.account_id AND we.mode = e.mode
			AND we.deleted_at IS NULL AND we.status = ?)`
	q := db.NewSelect().Model(rows).Column("e.seq", "e.id", "e.account_id", "e.mode", "e.charge_id", "e.type", "e.created_at", "e.twin_id", "e.twin_type")
	if postgres(db) {
		// The legacy event's charge is looked up once, for its URL and
		// for whether the payload is needed (two lookups before). OFFSET 0
		// keeps the planner from pulling the LATERAL up into a join, which
		// would probe charges for every event: kept apart, its type test
		// is a one-time filter and other events probe nothing (EXPLAIN
		// ANALYZE of a pass: charges_pkey loops = the legacy events). The
		// endpoint test is made once for a row and its twin.
		return q.ColumnExpr("u.webhook_url").
			ColumnExpr("CASE WHEN h.endpoint THEN e.payload WHEN u.webhook_url <> '' AND e.type IN (?) THEN e.payload END AS payload", legacy).
			ColumnExpr("CASE WHEN h.endpoint THEN e.twin_payload WHEN u.webhook_url <> '' AND e.twin_type IN (?) THEN e.twin_payload END AS twin_payload", legacy).
			Join("JOIN unnest(?::bigint[]) AS s(seq) ON e.seq = s.seq", pgdialect.Array(seqs)).
			Join("LEFT JOIN LATERAL (SELECT c.webhook_url FROM charges AS c WHERE (e.type IN (?) OR e.twin_type IN (?)) AND c.id = e.charge_id OFFSET 0) AS u ON true", legacy, legacy).
			Join("CROSS JOIN LATERAL (SELECT "+hasEndpoint+" AS endpoint) AS h", string(domain.EndpointActive))
	}
	const hasURL = `EXISTS (SELECT 1 FROM charges AS c WHERE c.id = e.charge_id AND c.webhook_url <> '')`
	return q.ColumnExpr("CASE WHEN e.type IN (?) OR e.twin_type IN (?) THEN (SELECT c.webhook_url FROM charges AS c WHERE c.id = e.charge_id) END AS webhook_url", legacy, legacy).
		ColumnExpr(`CASE WHEN `+hasEndpoint+` THEN e.payload WHEN e.type IN (?) AND `+hasURL+` THEN e.payload END AS payload`, string(domain.EndpointActive), legacy).
		ColumnExpr(`CASE WHEN `+hasEndpoint+` THEN e.twin_payload WHEN e.twin_type IN (?) AND `+hasURL+` THEN e.twin_payload END AS twin_payload`, string(domain.EndpointActive), legacy).
		Where("e.seq IN (?)", bun.List(seqs))
}

// eventPayloads completes payloads (event id → payload, as read with the
// pass) with those of the events ds deliver that the pass's read left out
// (seqOf maps the pass's event ids to their seqs): a delivery carries its
// event's payload as committed.
func eventPayloads(ctx context.Context, tx bun.Tx, ds []domain.WebhookDelivery, seqOf map[string]int64, payloads map[string][]byte) error {
	var want []int64
	for _, d := range ds {
		seq, ok := seqOf[d.EventID]
		if !ok {
			return fmt.Errorf("store: a delivery of event %q, which is not in the pass", d.EventID)
		}
		if _, ok := payloads[d.EventID]; !ok {
			payloads[d.EventID] = nil // asked for once
			want = append(want, seq)
		}
	}
	if len(want) == 0 {
		return nil
	}
	var rows []eventRow
	q := tx.NewSelect().Model(&rows).Column("e.id", "e.payload", "e.twin_id", "e.twin_payload")
	if postgres(tx) {
		q = q.Join("JOIN unnest(?::bigint[]) AS s(seq) ON e.seq = s.seq", pgdialect.Array(want))
	} else {
		q = q.Where("e.seq IN (?)", bun.List(want))
	}
	if err := q.Scan(ctx); err != nil {
		return mapError(err)
	}
	var pair []domain.Event
	for i := range rows {
		for _, e := range rows[i].events(pair[:0]) {
			payloads[e.ID] = e.Payload
		}
	}
	return nil
}

// claimOutbox locks the outbox rows of the next pass and returns the seqs
// of up to limit events in order. A claimed row whose events go past
// limit keeps the rest: it is rewritten to hold them (Postgres only; on
// SQLite a row is one event). done lists the rows to delete once the
// events are fanned out.
func claimOutbox(ctx context.Context, tx bun.Tx, limit int) (seqs, done []int64, err error) {
	var claims []outboxClaim
	if err := outboxClaimQuery(tx, &claims, limit).Scan(ctx); err != nil {
		return nil, nil, err
	}
	for _, c := range claims {
		room := limit - len(seqs)
		if room == 0 {
			break // a row claimed but not needed stays as it is
		}
		if len(c.Seqs) == 0 { // SQLite: the row is its event
			c.Seqs = []int64{c.ID}
		}
		if len(c.Seqs) > room {
			seqs = append(seqs, c.Seqs[:room]...)
			_, err := tx.NewUpdate().TableExpr("event_outbox").Set("seqs = ?", pgdialect.Array(c.Seqs[room:])).
				Where("id = ?", c.ID).Exec(ctx)
			return seqs, done, err
		}
		seqs = append(seqs, c.Seqs...)
		done = append(done, c.ID)
	}
	return seqs, done, nil
}

// DispatchEvents fans undispatched events out. See ports.WebhookOutbox.
func (db *DB) DispatchEvents(ctx context.Context, limit int, fan func(ports.OutboxBatch) ([]domain.WebhookDelivery, error)) (int, error) {
	n := 0
	err := db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if postgres(tx) {
			if _, err := tx.ExecContext(ctx, pinIndexPlan); err != nil {
				return mapError(err)
			}
		}
		seqs, done, err := claimOutbox(ctx, tx, limit)
		if err != nil || len(seqs) == 0 {
			return mapError(err)
		}
		var rows []outboxRow
		if err := outboxEventsQuery(tx, &rows, seqs).Scan(ctx); err != nil {
			return mapError(err)
		}
		slices.SortFunc(rows, func(a, b outboxRow) int { return cmp.Compare(a.Seq, b.Seq) })
		batch := ports.OutboxBatch{Events: make([]ports.OutboxEvent, 0, len(rows)*2), Endpoints: map[ports.Scope][]domain.WebhookEndpoint{}}
		accounts := map[string]bool{}
		seqOf := make(map[string]int64, len(rows)*2)
		payloads := map[string][]byte{}
		var pair []domain.Event
		for i := range rows {
			accounts[rows[i].AccountID] = true
			pair = rows[i].events(pair[:0])
			for _, ev := range pair {
				var url string
				if ev.Type.Legacy() { // the URL was read for the row's legacy event
					url = deref(rows[i].WebhookURL)
				}
				batch.Events = append(batch.Events, ports.OutboxEvent{Event: ev, WebhookURL: url})
				seqOf[ev.ID] = rows[i].Seq
				if ev.Payload != nil {
					payloads[ev.ID] = ev.Payload
				}
			}
		}
		ids := make([]string, 0, len(accounts))
		for a := range accounts {
			ids = append(ids, a)
		}
		var eps []endpointRow
		err = tx.NewSelect().Model(&eps).Where("we.account_id IN (?)", bun.List(ids)).
			Where("we.deleted_at IS NULL").Where("we.status = ?", string(domain.EndpointActive)).
			OrderExpr("we.created_at, we.id").Scan(ctx)
		if err != nil {
			return mapError(err)
		}
		for i := range eps {
			e, err := eps[i].toDomain()
			if err != nil {
				return err
			}
			s := ports.Scope{AccountID: e.AccountID, Mode: e.Mode}
			batch.Endpoints[s] = append(batch.Endpoints[s], e)
		}
		ds, err := fan(batch)
		if err != nil {
			return err
		}
		if len(ds) > 0 {
			if err := eventPayloads(ctx, tx, ds, seqOf, payloads); err != nil {
				return err
			}
			drs := make([]deliveryRow, len(ds))
			for i, d := range ds {
				drs[i] = deliveryFromDomain(d)
				drs[i].Payload = payloads[d.EventID]
			}
			if _, err := tx.NewInsert().Model(&drs).Exec(ctx); err != nil {
				return mapError(err)
			}
		}
		if len(done) > 0 {
			key := "id"
			if !postgres(tx) {
				key = "seq"
			}
			_, err = tx.NewDelete().TableExpr("event_outbox").Where("? IN (?)", bun.Ident(key), bun.List(done)).Exec(ctx)
			if err != nil {
				return mapError(err)
			}
		}
		n = len(seqs)
		return nil
	})
	return n, mapError(err)
}
