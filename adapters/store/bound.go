package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/uptrace/bun/schema"

	"github.com/quitapix/quita/ports"
)

// The create's hot path on Postgres (issue 17): its statements go as one
// pgconn batch — bound parameters over the extended protocol, statements
// prepared once per connection by name, values encoded by each create
// itself, one round trip, one implicit transaction (a single Sync after
// the last statement, so the first failure rolls back all). Nothing is interpolated into SQL text, so no
// value depends on the server's string escaping. The statements are
// derived from the same bun row structs the rest of the store uses, and
// write exactly what bun's INSERT of the row would (the contract suite
// reads every field back).

// insertPlan is one table's INSERT of a number of rows with a parameter
// per column, and how each column's value goes on the wire.
type insertPlan struct {
	sql    string
	name   string // of the statement prepared once per connection (prepare)
	fields []*schema.Field
	kinds  []argKind // how each field is encoded (encodeRow)
	// formats is the wire format of every parameter of the statement, all
	// its rows': binary where the value is cheaper so for both sides
	// (integers, booleans, bytea, instants), text for text and JSON.
	formats []int16
	// oids is the parameter types of the last statement description
	// checked against the kinds (prepare), so that a connection's cached
	// statement is checked with one comparison.
	oids atomic.Pointer[[]uint32]
	// size is the largest row encoded so far, up to maxRowSizeHint, to
	// size the next one's buffer.
	size atomic.Int64
}

// argKind is how encodeRow encodes a field, and what SQL type its column
// must have (kindTypes). Every field of a bound table has a kind other
// than argUnsupported (TestBoundColumnsMatchTheSchema).
type argKind uint8

const (
	argUnsupported argKind = iota
	argText                // string → its bytes, text format
	argTextPtr             // *string → NULL or its bytes
	argJSON                // string holding JSON, into json or jsonb → its bytes
	argInt                 // int → decimal text (integer or bigint)
	argInt8                // int64 → 8 bytes big-endian, binary format
	argInt8Ptr             // *int64 → NULL or as argInt8
	argBool                // bool → 1 byte, binary format
	argBytes               // []byte → NULL (nil) or its bytes, binary bytea
	argTime                // dbTime → NULL (zero) or microseconds since 2000, binary timestamptz
)

// kindTypes is the Postgres parameter types each kind is encoded for, by
// OID: a binary value read as another type would be stored as garbage
// (a bool's byte as text, an instant as a number), so prepare refuses a
// statement whose parameters Postgres typed otherwise.
var kindTypes = map[argKind][]uint32{
	argText:    {pgtype.TextOID, pgtype.VarcharOID},
	argTextPtr: {pgtype.TextOID, pgtype.VarcharOID},
	argJSON:    {pgtype.JSONOID, pgtype.JSONBOID},
	argInt:     {pgtype.Int4OID, pgtype.Int8OID},
	argInt8:    {pgtype.Int8OID},
	argInt8Ptr: {pgtype.Int8OID},
	argBool:    {pgtype.BoolOID},
	argBytes:   {pgtype.ByteaOID},
	argTime:    {pgtype.TimestamptzOID},
}

// jsonColumns are the bound tables' json and jsonb columns, whose string
// fields hold the JSON text itself (argJSON).
// TestBoundColumnsMatchTheSchema keeps this list and the kinds true to
// the migrated schema.
var jsonColumns = map[string]bool{"charges.methods": true, "charges.metadata": true}

// kindOf is how encodeRow encodes field f of table.
func kindOf(table string, f *schema.Field) argKind {
	t := f.StructField.Type
	if jsonColumns[table+"."+f.Name] {
		if t == reflect.TypeFor[string]() {
			return argJSON
		}
		return argUnsupported
	}
	switch t {
	case dbTimeType:
		return argTime
	case reflect.TypeFor[string]():
		return argText
	case reflect.TypeFor[*string]():
		return argTextPtr
	case reflect.TypeFor[int]():
		return argInt
	case reflect.TypeFor[int64]():
		return argInt8
	case reflect.TypeFor[*int64]():
		return argInt8Ptr
	case reflect.TypeFor[bool]():
		return argBool
	case reflect.TypeFor[[]byte]():
		return argBytes
	}
	return argUnsupported
}

type insertPlanKey struct {
	typ  reflect.Type
	rows int
}

var insertPlans sync.Map // insertPlanKey → *insertPlan

// planInsertRows returns the INSERT of rows rows of model's table (model:
// a pointer to a row struct) in one statement, every column but the
// scan-only ones: a batch of creates costs one statement per table (and
// one run of the outbox trigger) instead of one per row.
func planInsertRows(d schema.Dialect, model any, rows int) *insertPlan {
	key := insertPlanKey{reflect.TypeOf(model).Elem(), rows}
	if p, ok := insertPlans.Load(key); ok {
		return p.(*insertPlan)
	}
	t := d.Tables().Get(key.typ)
	p := &insertPlan{name: "quita_insert_" + t.Name + "_" + strconv.Itoa(rows)}
	var cols []string
	for _, f := range t.Fields {
		if f.Tag.HasOption("scanonly") {
			continue
		}
		p.fields = append(p.fields, f)
		p.kinds = append(p.kinds, kindOf(t.Name, f))
		cols = append(cols, string(f.SQLName))
	}
	tuples := make([]string, rows)
	n := 0
	for i := range tuples {
		params := make([]string, len(cols))
		for j := range params {
			n++
			params[j] = "$" + strconv.Itoa(n)
		}
		tuples[i] = "(" + strings.Join(params, ", ") + ")"
		for _, k := range p.kinds {
			p.formats = append(p.formats, k.format())
		}
	}
	p.sql = "INSERT INTO " + string(t.SQLName) + " (" + strings.Join(cols, ", ") + ") VALUES " + strings.Join(tuples, ", ")
	p.size.Store(256)
	actual, _ := insertPlans.LoadOrStore(key, p)
	return actual.(*insertPlan)
}

// format is the wire format of a kind's values: 1 binary, 0 text.
func (k argKind) format() int16 {
	switch k {
	case argInt8, argInt8Ptr, argBool, argBytes, argTime:
		return 1
	}
	return 0
}

// maxRowSizeHint bounds insertPlan.size: one large row (a long
// description) must not make every later row's buffer as large.
const maxRowSizeHint = 4 << 10

// pgEpochMicros is Postgres's epoch for instants (2000-01-01 UTC) in Unix
// microseconds: a binary timestamptz counts microseconds from it.
const pgEpochMicros = 946_684_800_000_000

// encodeRow appends row's values (row: a pointer to the plan's row
// struct) to dst in the plan's column order, as they go on the wire in
// the plan's formats: nil for NULL (a nil pointer or slice, a zero
// instant), an instant as UTC to the microsecond (as dbTime writes it).
// The values share one new buffer, so a row costs two allocations at
// most, and need nothing of row once encoded: the caller encodes its own
// create, and the batch's one flight only gathers what its creates
// encoded (issue 17).
func (p *insertPlan) encodeRow(dst [][]byte, row any) ([][]byte, error) {
	v := reflect.ValueOf(row).Elem()
	buf := make([]byte, 0, p.size.Load())
	dst = slices.Grow(dst, len(p.fields))
	for i, f := range p.fields {
		fv := v.FieldByIndex(f.Index)
		start := len(buf)
		switch p.kinds[i] {
		case argText, argJSON:
			buf = append(buf, fv.String()...)
		case argTextPtr:
			if fv.IsNil() {
				dst = append(dst, nil)
				continue
			}
			buf = append(buf, fv.Elem().String()...)
		case argInt:
			buf = strconv.AppendInt(buf, fv.Int(), 10)
		case argInt8:
			buf = binary.BigEndian.AppendUint64(buf, uint64(fv.Int()))
		case argInt8Ptr:
			if fv.IsNil() {
				dst = append(dst, nil)
				continue
			}
			buf = binary.BigEndian.AppendUint64(buf, uint64(fv.Elem().Int()))
		case argBool:
			b := byte(0)
			if fv.Bool() {
				b = 1
			}
			buf = append(buf, b)
		case argBytes:
			if fv.IsNil() {
				dst = append(dst, nil)
				continue
			}
			buf = append(buf, fv.Bytes()...)
		case argTime:
			t := fv.Addr().Interface().(*dbTime)
			if t.IsZero() {
				dst = append(dst, nil)
				continue
			}
			u := t.UTC().Truncate(time.Microsecond)
			if !ports.InTimeRange(u) {
				return nil, fmt.Errorf("%w: time %v is outside years 0001-9999", ports.ErrUnstorableValue, u)
			}
			buf = binary.BigEndian.AppendUint64(buf, uint64(u.UnixMicro()-pgEpochMicros))
		default:
			return nil, fmt.Errorf("store: %s of type %s has no bound encoding", f.Name, f.StructField.Type)
		}
		// A slice of buf stays valid when a later append moves buf: the
		// bytes it shows are never written again.
		dst = append(dst, buf[start:len(buf):len(buf)])
	}
	if n := int64(len(buf)); n > p.size.Load() && n <= maxRowSizeHint {
		p.size.Store(n)
	}
	return dst, nil
}

// prepare returns the statement description of p on conn, preparing it
// the first time (pgx keeps it per connection, by name), after checking
// that Postgres typed every parameter as its kind is encoded.
func (p *insertPlan) prepare(ctx context.Context, conn *pgx.Conn) (*pgconn.StatementDescription, error) {
	sd, err := conn.Prepare(ctx, p.name, p.sql)
	if err != nil {
		return nil, err
	}
	if last := p.oids.Load(); last != nil && slices.Equal(*last, sd.ParamOIDs) {
		return sd, nil
	}
	if len(sd.ParamOIDs) != len(p.formats) {
		return nil, fmt.Errorf("store: %s has %d parameters, want %d", p.name, len(sd.ParamOIDs), len(p.formats))
	}
	for i, oid := range sd.ParamOIDs {
		k := p.kinds[i%len(p.kinds)]
		if !slices.Contains(kindTypes[k], oid) {
			return nil, fmt.Errorf("store: %s: Postgres types %s as OID %d, not what it is encoded for", p.name, p.fields[i%len(p.fields)].Name, oid)
		}
	}
	oids := slices.Clone(sd.ParamOIDs)
	p.oids.Store(&oids)
	return sd, nil
}

var dbTimeType = reflect.TypeFor[dbTime]()

// selectPlan is one table's SELECT of every column of a row by a
// condition with bound parameters, and the fields to scan them into.
type selectPlan struct {
	sql    string
	fields []*schema.Field
}

var selectPlans sync.Map // reflect.Type + condition → *selectPlan

// planSelect returns the SELECT of model's table (model: a pointer to a row
// struct) of every column, WHERE cond ($1, $2, … for its values).
func planSelect(d schema.Dialect, model any, cond string) *selectPlan {
	typ := reflect.TypeOf(model).Elem()
	key := typ.String() + " " + cond
	if p, ok := selectPlans.Load(key); ok {
		return p.(*selectPlan)
	}
	t := d.Tables().Get(typ)
	p := &selectPlan{}
	cols := make([]string, len(t.Fields))
	for i, f := range t.Fields {
		p.fields = append(p.fields, f)
		cols[i] = string(f.SQLName)
	}
	p.sql = "SELECT " + strings.Join(cols, ", ") + " FROM " + string(t.SQLName) + " WHERE " + cond
	selectPlans.Store(key, p)
	return p
}

// dest is what Scan fills: a pointer to each of row's fields, in the
// plan's column order (dbTime scans itself; pointer fields take NULL).
func (p *selectPlan) dest(row any) []any {
	v := reflect.ValueOf(row).Elem()
	out := make([]any, len(p.fields))
	for i, f := range p.fields {
		out[i] = v.FieldByIndex(f.Index).Addr().Interface()
	}
	return out
}

// getChargeBound is selectCharge of a scope's charge on Postgres over the
// hot pool: GET /v1/charges/{id} and every read of one charge runs a
// prepared statement instead of having the text parsed and planned (the
// planner sizes each of the charges table's indexes) every time.
func (db *DB) getChargeBound(ctx context.Context, scope ports.Scope, id string) (*chargeRow, error) {
	row := new(chargeRow)
	p := planSelect(db.bun.Dialect(), row, "id = $1")
	err := retryLostConn(func() error {
		conn, err := acquire(ctx, db.hot)
		if err != nil {
			return err
		}
		defer conn.Release()
		return conn.QueryRow(ctx, p.sql, id).Scan(p.dest(row)...)
	})
	if err != nil {
		return nil, mapError(err)
	}
	if !row.inScope(scope) {
		return nil, ports.ErrNotFound
	}
	return row, nil
}

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
	return db.creates.do(ctx, c)
}

// insertChargesBound writes creates in one batch: one round trip, one
// transaction (batchCharges).
func (db *DB) insertChargesBound(ctx context.Context, creates []chargeCreate) error {
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

func (db *DB) insertOneChargeBound(ctx context.Context, c chargeCreate) error {
	return db.insertChargesBound(ctx, []chargeCreate{c})
}

// settleIntentName names settleIntentSQL prepared on a hot connection.
const settleIntentName = "quita_settle_intent"

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

// acquire takes a connection of pool, waiting at most poolAcquireTimeout
// (then ports.ErrStoreUnavailable, as for the main pool).
func acquire(ctx context.Context, pool *pgxpool.Pool) (*pgxpool.Conn, error) {
	actx, cancel := context.WithTimeout(ctx, poolAcquireTimeout)
	defer cancel()
	conn, err := pool.Acquire(actx)
	if err != nil {
		if ctx.Err() == nil && actx.Err() != nil {
			return nil, fmt.Errorf("%w: no database connection free within %s", ports.ErrStoreUnavailable, poolAcquireTimeout)
		}
		return nil, mapError(err)
	}
	return conn, nil
}
