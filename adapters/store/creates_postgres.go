package store

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/uptrace/bun/schema"

	"github.com/quitapix/quita/adapters/store/pgfast"
	"github.com/quitapix/quita/internal/groupcommit"
	"github.com/quitapix/quita/ports"
)

// pgCharges is the chargePath on Postgres: its statements run on a pool
// of their own with bound parameters (adapters/store/pgfast), and
// concurrent creates, and concurrent replay checks, each share one batch
// (internal/groupcommit, whose package doc states the failure rule).
type pgCharges struct {
	pool   *pgfast.Pool
	tables *pgfast.Tables
	// creates batches concurrent creates (insertCharge).
	creates *groupcommit.Group[pgCreate, struct{}]
	// replayChecks batches concurrent replay checks of live Pix creates
	// with their cob intents (recordOrIntent, reads_postgres.go).
	replayChecks *groupcommit.Group[ports.ProviderIntent, *ports.IdempotencyRecord]
}

var _ chargePath = (*pgCharges)(nil)

// jsonColumns are the json and jsonb columns of the tables a create
// writes, whose string fields hold the JSON text itself.
// TestFastColumnsMatchTheSchema keeps this list true to the schema.
var jsonColumns = []string{"charges.methods", "charges.metadata"}

// newPGCharges opens the pool of the path, configured as the store's
// main pool cfg.
func newPGCharges(ctx context.Context, cfg *pgxpool.Config, d schema.Dialect) (*pgCharges, error) {
	pool, err := pgfast.Open(ctx, cfg, poolAcquireTimeout)
	if err != nil {
		return nil, err
	}
	p := &pgCharges{pool: pool, tables: pgfast.NewTables(d, jsonColumns...)}
	p.creates = newGroup(p.insertCharges, p.insertOneCharge)
	p.replayChecks = newGroup(p.checkReplays, p.checkReplay)
	return p, nil
}

func (p *pgCharges) flights() ports.FlightStats { return flightStats(p.creates.Stats()) }

func (p *pgCharges) close() { p.pool.Close() }

// pgCreate is one create with its rows' values encoded: the idempotency
// record's, the charge's, then each event's.
type pgCreate struct {
	chargeCreate
	wire [][]byte
}

// insertCharge encodes c in the caller's goroutine — what the batch's one
// flight would otherwise do for every create in turn, while all of them
// wait on it — and writes it in the next batch of creates.
func (p *pgCharges) insertCharge(ctx context.Context, c chargeCreate) error {
	idemPlan, chargePlan, eventPlan := p.tables.Insert((*idempotencyRow)(nil), 1), p.tables.Insert((*chargeRow)(nil), 1), p.tables.Insert((*eventRow)(nil), 1)
	wire := make([][]byte, 0, idemPlan.Columns()+chargePlan.Columns()+len(c.evs)*eventPlan.Columns())
	var err error
	if c.idem != nil {
		if wire, err = idemPlan.Encode(wire, c.idem); err != nil {
			return err
		}
	}
	if wire, err = chargePlan.Encode(wire, c.row); err != nil {
		return err
	}
	for i := range c.evs {
		if wire, err = eventPlan.Encode(wire, &c.evs[i]); err != nil {
			return err
		}
	}
	_, err = p.creates.Do(ctx, pgCreate{chargeCreate: c, wire: wire})
	return err
}

// insertCharges writes creates in one batch: one round trip, one
// transaction (batchCreates).
func (p *pgCharges) insertCharges(ctx context.Context, creates []pgCreate, _ []groupcommit.Result[struct{}]) error {
	return mapError(p.pool.Run(ctx, func(conn *pgx.Conn) error {
		b, err := p.batchCreates(ctx, conn, creates)
		if err != nil {
			return err
		}
		return b.Send(ctx)
	}))
}

func (p *pgCharges) insertOneCharge(ctx context.Context, c pgCreate) (struct{}, error) {
	return struct{}{}, p.insertCharges(ctx, []pgCreate{c}, nil)
}

// settleIntentName names settleIntentSQL prepared on a connection.
const settleIntentName = "quita_settle_intent"

// batchCreates is creates as one batch for conn, each INSERT carrying the
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
// load.
func (p *pgCharges) batchCreates(ctx context.Context, conn *pgx.Conn, cs []pgCreate) (*pgfast.Batch, error) {
	idemN := p.tables.Insert((*idempotencyRow)(nil), 1).Columns()
	chargeN := p.tables.Insert((*chargeRow)(nil), 1).Columns()
	eventN := p.tables.Insert((*eventRow)(nil), 1).Columns()
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
	deltaPlan := p.tables.Insert((*statDeltaRow)(nil), 1)
	for i, r := range deltas {
		var err error
		if deltaRows[i], err = deltaPlan.Encode(nil, r); err != nil {
			return nil, err
		}
	}

	b := p.tables.NewBatch(conn)
	if err := b.Insert(ctx, (*idempotencyRow)(nil), idems); err != nil {
		return nil, err
	}
	for _, c := range cs {
		if !c.settle || c.idem == nil {
			continue
		}
		var txid []byte // NULL: a charge without a cob
		if c.row.PixTxID != nil {
			txid = []byte(*c.row.PixTxID)
		}
		args := [][]byte{[]byte(c.idem.AccountID), []byte(c.idem.Mode), []byte(c.idem.Key), txid}
		if err := b.Exec(ctx, settleIntentName, settleIntentSQL, args); err != nil {
			return nil, err
		}
	}
	if err := b.Insert(ctx, (*chargeRow)(nil), charges); err != nil {
		return nil, err
	}
	if err := b.Insert(ctx, (*statDeltaRow)(nil), deltaRows); err != nil {
		return nil, err
	}
	if err := b.Insert(ctx, (*eventRow)(nil), events); err != nil {
		return nil, err
	}
	return b, nil
}
