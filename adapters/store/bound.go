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

// settleIntentName names settleIntentSQL prepared on a hot connection.
const settleIntentName = "quita_settle_intent"
