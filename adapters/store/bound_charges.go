package store

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun/schema"

	"github.com/quitapix/quita/internal/groupcommit"
)

// chargeCreate is one create's rows, as insertChargeBound writes them.
type chargeCreate struct {
	row  *chargeRow
	evs  []eventRow
	idem *idempotencyRow
	// settle: delete the key's cob intent of the charge's txid
	// (ports.IdempotencyRecord.SettlesIntent).
	settle bool
	// wire is the rows' values encoded (encode): the idempotency
	// record's, the charge's, then each event's.
	wire [][]byte
}

// encode fills c.wire from its rows, in the caller's goroutine: what the
// batch's one flight would otherwise do for every create in turn, while
// all of them wait on it.
func (c *chargeCreate) encode(d schema.Dialect) error {
	idemPlan, chargePlan, eventPlan := planInsertRows(d, (*idempotencyRow)(nil), 1), planInsertRows(d, (*chargeRow)(nil), 1), planInsertRows(d, (*eventRow)(nil), 1)
	wire := make([][]byte, 0, len(idemPlan.fields)+len(chargePlan.fields)+len(c.evs)*len(eventPlan.fields))
	var err error
	if c.idem != nil {
		if wire, err = idemPlan.encodeRow(wire, c.idem); err != nil {
			return err
		}
	}
	if wire, err = chargePlan.encodeRow(wire, c.row); err != nil {
		return err
	}
	for i := range c.evs {
		if wire, err = eventPlan.encodeRow(wire, &c.evs[i]); err != nil {
			return err
		}
	}
	c.wire = wire
	return nil
}

// insertChargeBound is insertCharge on Postgres over the hot pool: the
// idempotency record first and its key's intent settled, the charge, its
// counter delta, its events in one INSERT — one batch. Concurrent creates
// share a batch (db.creates, coalesce.go).
func (db *DB) insertChargeBound(ctx context.Context, c chargeCreate) error {
	if err := c.encode(db.bun.Dialect()); err != nil {
		return err
	}
	_, err := db.creates.Do(ctx, c)
	return err
}

// insertChargesBound writes creates in one batch: one round trip, one
// transaction (batchCharges).
func (db *DB) insertChargesBound(ctx context.Context, creates []chargeCreate, _ []groupcommit.Result[struct{}]) error {
	return mapError(retryLostConn(func() error {
		conn, err := acquire(ctx, db.hot)
		if err != nil {
			return err
		}
		defer conn.Release()
		b, err := db.batchCharges(ctx, conn.Conn(), creates)
		if err != nil {
			return err
		}
		return conn.Conn().PgConn().ExecBatch(ctx, b).Close()
	}))
}

func (db *DB) insertOneChargeBound(ctx context.Context, c chargeCreate) (struct{}, error) {
	return struct{}{}, db.insertChargesBound(ctx, []chargeCreate{c}, nil)
}

// batchCharges is creates as one batch for conn, each INSERT carrying the
// rows of all: the idempotency records first, the intents of those that
// recorded one settled (chargeCreate.settle), the charges, their counter
// deltas (summed per group: creates of one account, day and status add up
// to one row) and the events. Per row the work is the same as one
// create's; per create it saves the statements' own cost (bind, execute,
// executor start, the outbox trigger's run) on both sides of the
// connection. Each such intent is deleted by its own primary-key DELETE: a
// join over unnest is planned as a sequential scan once provider_intents
// has been analysed small, and that table churns (every live create
// inserts and deletes a row), so the plan would go stale exactly under
// load. The statements are prepared on conn the first time (one round
// trip each, once per connection); pgconn sends the batch with one Sync,
// so it is one implicit transaction and the first failure rolls back all.
func (db *DB) batchCharges(ctx context.Context, conn *pgx.Conn, cs []chargeCreate) (*pgconn.Batch, error) {
	d := db.bun.Dialect()
	idemN := len(planInsertRows(d, (*idempotencyRow)(nil), 1).fields)
	chargeN := len(planInsertRows(d, (*chargeRow)(nil), 1).fields)
	eventN := len(planInsertRows(d, (*eventRow)(nil), 1).fields)
	var (
		idems, charges, events [][][]byte // each row's values, by table
		deltas                 []*statDeltaRow
		group                  = map[statDeltaRow]*statDeltaRow{}
	)
	for _, c := range cs {
		w := c.wire
		if c.idem != nil {
			idems, w = append(idems, w[:idemN]), w[idemN:]
		}
		charges, w = append(charges, w[:chargeN]), w[chargeN:]
		for len(w) > 0 {
			events, w = append(events, w[:eventN]), w[eventN:]
		}
		delta := newChargeDelta(c.row)
		k := *delta
		k.N, k.Volume, k.Refunded = 0, 0, 0
		if sum, ok := group[k]; ok {
			sum.N, sum.Volume, sum.Refunded = sum.N+delta.N, sum.Volume+delta.Volume, sum.Refunded+delta.Refunded
			continue
		}
		group[k] = delta
		deltas = append(deltas, delta)
	}
	deltaRows := make([][][]byte, len(deltas))
	deltaPlan := planInsertRows(d, (*statDeltaRow)(nil), 1)
	for i, r := range deltas {
		var err error
		if deltaRows[i], err = deltaPlan.encodeRow(nil, r); err != nil {
			return nil, err
		}
	}

	b := &pgconn.Batch{}
	var scratch [][]byte
	queue := func(model any, rows [][][]byte) error {
		for len(rows) > 0 {
			k := 32
			for k > len(rows) {
				k /= 2
			}
			p := planInsertRows(d, model, k)
			sd, err := p.prepare(ctx, conn)
			if err != nil {
				return err
			}
			scratch = scratch[:0]
			for _, r := range rows[:k] {
				scratch = append(scratch, r...)
			}
			b.ExecStatement(sd, scratch, p.formats, nil) // encodes the values into b at once
			rows = rows[k:]
		}
		return nil
	}
	if err := queue((*idempotencyRow)(nil), idems); err != nil {
		return nil, err
	}
	for _, c := range cs {
		if !c.settle || c.idem == nil {
			continue
		}
		sd, err := conn.Prepare(ctx, settleIntentName, settleIntentSQL)
		if err != nil {
			return nil, err
		}
		var txid []byte // NULL: a charge without a cob
		if c.row.PixTxID != nil {
			txid = []byte(*c.row.PixTxID)
		}
		b.ExecStatement(sd, [][]byte{[]byte(c.idem.AccountID), []byte(c.idem.Mode), []byte(c.idem.Key), txid}, nil, nil)
	}
	if err := queue((*chargeRow)(nil), charges); err != nil {
		return nil, err
	}
	if err := queue((*statDeltaRow)(nil), deltaRows); err != nil {
		return nil, err
	}
	if err := queue((*eventRow)(nil), events); err != nil {
		return nil, err
	}
	return b, nil
}
