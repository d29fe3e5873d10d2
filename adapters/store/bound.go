package store

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/uptrace/bun/schema"

	"github.com/quitapix/quita/ports"
)

// The create's hot path on Postgres (issue 17): its statements go as one
// pgx batch — bound parameters over the extended protocol, statements
// prepared once per connection and cached, one round trip, one implicit
// transaction (pgx sends a single Sync after the last one, so the first
// failure rolls back all). Nothing is interpolated into SQL text, so no
// value depends on the server's string escaping. The statements are
// derived from the same bun row structs the rest of the store uses, and
// write exactly what bun's INSERT of the row would (the contract suite
// reads every field back).

// insertPlan is one table's INSERT with a parameter per column.
type insertPlan struct {
	sql    string
	fields []*schema.Field
	kinds  []argKind // how each field is bound (appendArgs)
}

// argKind is how appendArgs binds a field: as a pointer into the row
// whose type tells pgx how to encode it (the Valuer types below), so pgx
// neither boxes a copy of the value nor dereferences it by reflection —
// either costs an allocation per value, ~40 per create (issue 17).
type argKind uint8

const (
	argOther   argKind = iota // the field's address, which pgx dereferences
	argText                   // string → *textArg
	argTextPtr                // *string → nil or *textArg
	argInt8                   // int64 → *int8Arg
	argInt8Ptr                // *int64 → nil or *int8Arg
	argBool                   // bool → *boolArg
	argBytes                  // []byte → *bytesArg
	argTime                   // dbTime → NULL or a UTC time.Time
)

// textArg, int8Arg, boolArg and bytesArg are a row's field seen through
// pgtype's Valuer interfaces: a pointer to one is bound with no copy.
type (
	textArg  string
	int8Arg  int64
	boolArg  bool
	bytesArg []byte
)

func (a *textArg) TextValue() (pgtype.Text, error) {
	return pgtype.Text{String: string(*a), Valid: true}, nil
}

func (a *int8Arg) Int64Value() (pgtype.Int8, error) {
	return pgtype.Int8{Int64: int64(*a), Valid: true}, nil
}

func (a *boolArg) BoolValue() (pgtype.Bool, error) {
	return pgtype.Bool{Bool: bool(*a), Valid: true}, nil
}

func (a *bytesArg) BytesValue() ([]byte, error) { return []byte(*a), nil }

// jsonColumns are the bound tables' json and jsonb columns. pgx encodes
// such a parameter from a string as the JSON text itself but from any
// other type (textArg included) as that value marshalled to JSON, so
// their string fields are bound as argOther.
// TestBoundColumnsMatchTheSchema keeps this list and the kinds true to
// the migrated schema.
var jsonColumns = map[string]bool{"charges.methods": true, "charges.metadata": true}

// kindOf is how appendArgs binds field f of table.
func kindOf(table string, f *schema.Field) argKind {
	if jsonColumns[table+"."+f.Name] {
		return argOther
	}
	switch t := f.StructField.Type; {
	case t == dbTimeType:
		return argTime
	case t == reflect.TypeFor[string]():
		return argText
	case t == reflect.TypeFor[*string]():
		return argTextPtr
	case t == reflect.TypeFor[int64]():
		return argInt8
	case t == reflect.TypeFor[*int64]():
		return argInt8Ptr
	case t == reflect.TypeFor[bool]():
		return argBool
	case t == reflect.TypeFor[[]byte]():
		return argBytes
	}
	return argOther
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
	p := &insertPlan{}
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
	}
	p.sql = "INSERT INTO " + string(t.SQLName) + " (" + strings.Join(cols, ", ") + ") VALUES " + strings.Join(tuples, ", ")
	insertPlans.Store(key, p)
	return p
}

// appendArgs appends the row's values to dst in the plan's column order,
// as pgx binds them: a nil pointer or a zero instant is NULL, an instant is
// UTC to the microsecond (as dbTime writes it), anything else is itself —
// passed as a pointer into row (through the Valuer types where the field
// has one), so binding a value does not box (allocate) it: row must not
// change until the statement is sent.
func (p *insertPlan) appendArgs(dst []any, row any) ([]any, error) {
	v := reflect.ValueOf(row).Elem()
	dst = slices.Grow(dst, len(p.fields))
	out := dst[len(dst) : len(dst)+len(p.fields)]
	for i, f := range p.fields {
		fv := v.FieldByIndex(f.Index)
		switch p.kinds[i] {
		case argTime:
			x := fv.Addr().Interface().(*dbTime)
			if x.IsZero() {
				out[i] = nil
				continue
			}
			u := x.UTC().Truncate(time.Microsecond)
			if y := u.Year(); y < 1 || y > 9999 {
				return nil, fmt.Errorf("store: time %v is outside years 1-9999", u)
			}
			out[i] = u
		case argText:
			out[i] = (*textArg)(fv.Addr().Interface().(*string))
		case argInt8:
			out[i] = (*int8Arg)(fv.Addr().Interface().(*int64))
		case argBool:
			out[i] = (*boolArg)(fv.Addr().Interface().(*bool))
		case argBytes:
			out[i] = (*bytesArg)(fv.Addr().Interface().(*[]byte))
		case argTextPtr, argInt8Ptr:
			switch {
			case fv.IsNil():
				out[i] = nil
			case p.kinds[i] == argTextPtr:
				out[i] = (*textArg)(fv.Interface().(*string))
			default:
				out[i] = (*int8Arg)(fv.Interface().(*int64))
			}
		default:
			switch {
			case fv.Kind() != reflect.Pointer:
				out[i] = fv.Addr().Interface()
			case fv.IsNil():
				out[i] = nil
			default:
				out[i] = fv.Interface()
			}
		}
	}
	return dst[:len(dst)+len(p.fields)], nil
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
}

// insertChargeBound is insertCharge on Postgres over the hot pool: the
// idempotency record first and its key's intent settled, the charge, its
// counter delta, its events in one INSERT — one batch. Concurrent creates
// share a batch (db.creates, coalesce.go).
func (db *DB) insertChargeBound(ctx context.Context, c chargeCreate) error {
	return db.creates.do(ctx, c)
}

// insertChargesBound writes creates in one batch: one round trip, one
// transaction (queueCharges).
func (db *DB) insertChargesBound(ctx context.Context, creates []chargeCreate) error {
	return mapError(retryLostConn(func() error {
		// A new batch each time: a sent one holds statement descriptions
		// of the connection it went on.
		b := &pgx.Batch{}
		if err := db.queueCharges(b, creates); err != nil {
			return err
		}
		conn, err := acquire(ctx, db.hot)
		if err != nil {
			return err
		}
		defer conn.Release()
		return conn.SendBatch(ctx, b).Close()
	}))
}

func (db *DB) insertOneChargeBound(ctx context.Context, c chargeCreate) error {
	return db.insertChargesBound(ctx, []chargeCreate{c})
}

// queueCharges adds creates to b, each INSERT carrying the rows of all:
// the idempotency records first, the intents of those that recorded one
// settled (chargeCreate.settle), the charges, their
// counter deltas (summed per group: creates of one account, day and status
// add up to one row) and the events. Per row the work is the same as one
// create's; per create it saves the statements' own cost (bind, execute,
// executor start, the outbox trigger's run) on both sides of the
// connection. Each such intent is deleted by its own primary-key DELETE: a join
// over unnest is planned as a sequential scan once provider_intents has
// been analysed small, and that table churns (every live create inserts
// and deletes a row), so the plan would go stale exactly under load.
func (db *DB) queueCharges(b *pgx.Batch, cs []chargeCreate) error {
	d := db.bun.Dialect()
	var (
		idems  []*idempotencyRow
		rows   []*chargeRow
		evs    []*eventRow
		deltas []*statDeltaRow
		group  = map[statDeltaRow]*statDeltaRow{}
	)
	for _, c := range cs {
		if c.idem != nil {
			idems = append(idems, c.idem)
		}
		rows = append(rows, c.row)
		for i := range c.evs {
			evs = append(evs, &c.evs[i])
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
	if err := queueInsertRows(b, d, idems); err != nil {
		return err
	}
	for _, c := range cs {
		if c.settle && c.idem != nil {
			b.Queue(settleIntentSQL, c.idem.AccountID, c.idem.Mode, c.idem.Key, c.row.PixTxID)
		}
	}
	if err := queueInsertRows(b, d, rows); err != nil {
		return err
	}
	if err := queueInsertRows(b, d, deltas); err != nil {
		return err
	}
	return queueInsertRows(b, d, evs)
}

// queueInsertRows adds the INSERT of rows (pointers to row structs of one
// table) to b, in statements of 32, 16, 8, 4, 2 and 1 rows: a few statement
// texts per table to prepare and cache per connection, not one per batch
// size.
func queueInsertRows[R any](b *pgx.Batch, d schema.Dialect, rows []*R) error {
	for len(rows) > 0 {
		k := 32
		for k > len(rows) {
			k /= 2
		}
		p := planInsertRows(d, rows[0], k)
		args := make([]any, 0, k*len(p.fields))
		for _, r := range rows[:k] {
			var err error
			if args, err = p.appendArgs(args, r); err != nil {
				return err
			}
		}
		b.Queue(p.sql, args...)
		rows = rows[k:]
	}
	return nil
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
