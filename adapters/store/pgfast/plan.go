package pgfast

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

// Tables plans statements on the tables of a store's bun row structs. A
// statement writes exactly what bun's INSERT of the row would, and reads
// every column bun would (the store's contract suite reads every field
// back). It is safe for concurrent use.
type Tables struct {
	dialect schema.Dialect
	json    map[string]bool
	inserts sync.Map // insertKey → *InsertPlan
	selects sync.Map // reflect.Type + condition → *SelectPlan
}

// NewTables plans on the tables d knows. jsonColumns names, as
// "table.column", the json and jsonb columns, whose string fields hold the
// JSON text itself.
func NewTables(d schema.Dialect, jsonColumns ...string) *Tables {
	t := &Tables{dialect: d, json: map[string]bool{}}
	for _, c := range jsonColumns {
		t.json[c] = true
	}
	return t
}

// InsertPlan is one table's INSERT of a number of rows with a parameter
// per column, and how each column's value goes on the wire.
type InsertPlan struct {
	sql    string
	name   string // of the statement prepared once per connection (Prepare)
	fields []*schema.Field
	kinds  []argKind // how each field is encoded (Encode)
	// formats is the wire format of every parameter of the statement, all
	// its rows': binary where the value is cheaper so for both sides
	// (integers, booleans, bytea, instants), text for text and JSON.
	formats []int16
	// oids is the parameter types of the last statement description
	// checked against the kinds (Prepare), so that a connection's cached
	// statement is checked with one comparison.
	oids atomic.Pointer[[]uint32]
	// size is the largest row encoded so far, up to maxRowSizeHint, to
	// size the next one's buffer.
	size atomic.Int64
}

// Columns is how many values one row of the plan has.
func (p *InsertPlan) Columns() int { return len(p.fields) }

// Column is the name of the column of a row's i-th value, and the wire
// format of that value (1 binary, 0 text).
func (p *InsertPlan) Column(i int) (name string, format int16) {
	return p.fields[i].Name, p.formats[i]
}

// argKind is how Encode encodes a field, and what SQL type its column
// must have (kindTypes).
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
	argTime                // an instant → NULL (zero) or microseconds since 2000, binary timestamptz
)

// kindTypes is the Postgres parameter types each kind is encoded for, by
// OID: a binary value read as another type would be stored as garbage
// (a bool's byte as text, an instant as a number), so Prepare refuses a
// statement whose parameters Postgres typed otherwise — or a field of no
// kind (argUnsupported has no type).
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

// instant is a row field holding an instant, NULL when zero: the store's
// instant type, which embeds time.Time.
type instant interface {
	IsZero() bool
	UTC() time.Time
}

var instantType = reflect.TypeFor[instant]()

// kindOf is how Encode encodes field f of table.
func (t *Tables) kindOf(table string, f *schema.Field) argKind {
	typ := f.StructField.Type
	if t.json[table+"."+f.Name] {
		if typ == reflect.TypeFor[string]() {
			return argJSON
		}
		return argUnsupported
	}
	switch typ {
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
	if typ.Kind() == reflect.Struct && reflect.PointerTo(typ).Implements(instantType) {
		return argTime
	}
	return argUnsupported
}

type insertKey struct {
	typ  reflect.Type
	rows int
}

// Insert returns the INSERT of rows rows of model's table (model: a
// pointer to a row struct) in one statement, every column but the
// scan-only ones: a batch of creates costs one statement per table (and
// one run of its triggers) instead of one per row.
func (t *Tables) Insert(model any, rows int) *InsertPlan {
	key := insertKey{reflect.TypeOf(model).Elem(), rows}
	if p, ok := t.inserts.Load(key); ok {
		return p.(*InsertPlan)
	}
	table := t.dialect.Tables().Get(key.typ)
	p := &InsertPlan{name: "quita_insert_" + table.Name + "_" + strconv.Itoa(rows)}
	var cols []string
	for _, f := range table.Fields {
		if f.Tag.HasOption("scanonly") {
			continue
		}
		p.fields = append(p.fields, f)
		p.kinds = append(p.kinds, t.kindOf(table.Name, f))
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
	p.sql = "INSERT INTO " + string(table.SQLName) + " (" + strings.Join(cols, ", ") + ") VALUES " + strings.Join(tuples, ", ")
	p.size.Store(256)
	actual, _ := t.inserts.LoadOrStore(key, p)
	return actual.(*InsertPlan)
}

// format is the wire format of a kind's values: 1 binary, 0 text.
func (k argKind) format() int16 {
	switch k {
	case argInt8, argInt8Ptr, argBool, argBytes, argTime:
		return 1
	}
	return 0
}

// maxRowSizeHint bounds InsertPlan.size: one large row (a long
// description) must not make every later row's buffer as large.
const maxRowSizeHint = 4 << 10

// pgEpochMicros is Postgres's epoch for instants (2000-01-01 UTC) in Unix
// microseconds: a binary timestamptz counts microseconds from it.
const pgEpochMicros = 946_684_800_000_000

// Encode appends row's values (row: a pointer to the plan's row struct)
// to dst in the plan's column order, as they go on the wire in the plan's
// formats: nil for NULL (a nil pointer or slice, a zero instant), an
// instant as UTC to the microsecond. The values share one new buffer, so
// a row costs two allocations at most, and need nothing of row once
// encoded: each caller encodes its own rows, and a batch's one flight
// only gathers them.
func (p *InsertPlan) Encode(dst [][]byte, row any) ([][]byte, error) {
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
			t := fv.Addr().Interface().(instant)
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
			return nil, fmt.Errorf("pgfast: %s of type %s has no encoding", f.Name, f.StructField.Type)
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

// Prepare returns the statement description of p on conn, preparing it
// the first time (pgx keeps it per connection, by name), after checking
// that Postgres typed every parameter as its kind is encoded.
func (p *InsertPlan) Prepare(ctx context.Context, conn *pgx.Conn) (*pgconn.StatementDescription, error) {
	sd, err := conn.Prepare(ctx, p.name, p.sql)
	if err != nil {
		return nil, err
	}
	if last := p.oids.Load(); last != nil && slices.Equal(*last, sd.ParamOIDs) {
		return sd, nil
	}
	if len(sd.ParamOIDs) != len(p.formats) {
		return nil, fmt.Errorf("pgfast: %s has %d parameters, want %d", p.name, len(sd.ParamOIDs), len(p.formats))
	}
	for i, oid := range sd.ParamOIDs {
		k := p.kinds[i%len(p.kinds)]
		if !slices.Contains(kindTypes[k], oid) {
			return nil, fmt.Errorf("pgfast: %s: Postgres types %s as OID %d, not what it is encoded for", p.name, p.fields[i%len(p.fields)].Name, oid)
		}
	}
	oids := slices.Clone(sd.ParamOIDs)
	p.oids.Store(&oids)
	return sd, nil
}

// SelectPlan is one table's SELECT of every column of a row by a
// condition with bound parameters, and the fields to scan them into.
type SelectPlan struct {
	sql    string
	fields []*schema.Field
}

// Select returns the SELECT of model's table (model: a pointer to a row
// struct) of every column, WHERE cond ($1, $2, … for its values).
func (t *Tables) Select(model any, cond string) *SelectPlan {
	typ := reflect.TypeOf(model).Elem()
	key := typ.String() + " " + cond
	if p, ok := t.selects.Load(key); ok {
		return p.(*SelectPlan)
	}
	table := t.dialect.Tables().Get(typ)
	p := &SelectPlan{}
	cols := make([]string, len(table.Fields))
	for i, f := range table.Fields {
		p.fields = append(p.fields, f)
		cols[i] = string(f.SQLName)
	}
	p.sql = "SELECT " + strings.Join(cols, ", ") + " FROM " + string(table.SQLName) + " WHERE " + cond
	t.selects.Store(key, p)
	return p
}

// SQL is the plan's statement.
func (p *SelectPlan) SQL() string { return p.sql }

// QueryRow reads into row (a pointer to the plan's row struct) the row of
// p's condition with args, on conn: pgx.ErrNoRows when there is none.
func (p *SelectPlan) QueryRow(ctx context.Context, conn *pgx.Conn, row any, args ...any) error {
	return conn.QueryRow(ctx, p.sql, args...).Scan(p.dest(row)...)
}

// dest is what Scan fills: a pointer to each of row's fields, in the
// plan's column order (the store's instant type scans itself; pointer
// fields take NULL).
func (p *SelectPlan) dest(row any) []any {
	v := reflect.ValueOf(row).Elem()
	out := make([]any, len(p.fields))
	for i, f := range p.fields {
		out[i] = v.FieldByIndex(f.Index).Addr().Interface()
	}
	return out
}
