package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/schema"
)

// TestEncodeRowWritesTheWireValues: a create's values are encoded for the
// wire by its own goroutine (issue 17) — text as its bytes, integers,
// booleans and instants in Postgres's binary formats (an instant in UTC to
// the microsecond from 2000-01-01), an empty string as an empty value and
// a nil pointer, a nil slice or a zero instant as NULL — and encoding a
// row allocates only its one buffer.
func TestEncodeRowWritesTheWireValues(t *testing.T) {
	brt := time.FixedZone("BRT", -3*3600)
	at := time.Date(2026, 11, 27, 9, 30, 0, 123456789, brt)
	txid := "txid0001"
	row := &idempotencyRow{AccountID: "acct_1", Mode: "live", Key: "key-0001", Fingerprint: "", ResourceID: "ch_1",
		StatusCode: 201, Body: []byte(`{"id":"ch_1"}`), CreatedAt: dbTime{at}}
	p := planInsertRows(pgdialect.New(), row, 1)

	vals, err := p.encodeRow([][]byte{[]byte("before")}, row)
	if err != nil {
		t.Fatal(err)
	}
	if len(vals) != 1+len(p.fields) || string(vals[0]) != "before" {
		t.Fatalf("encodeRow kept %q and added %d values for %d columns", vals[:1], len(vals)-1, len(p.fields))
	}
	byColumn := map[string][]byte{}
	format := map[string]int16{}
	for i, f := range p.fields {
		name := strings.Trim(string(f.SQLName), `"`)
		byColumn[name], format[name] = vals[1+i], p.formats[i]
	}
	micros := make([]byte, 8)
	binary.BigEndian.PutUint64(micros, uint64(at.UnixMicro()-946684800000000))
	for col, want := range map[string]struct {
		value  []byte
		format int16
	}{
		"key":         {[]byte("key-0001"), 0},
		"fingerprint": {[]byte{}, 0},
		"body":        {[]byte(`{"id":"ch_1"}`), 1},
		"status_code": {[]byte("201"), 0},
		"created_at":  {micros, 1},
	} {
		if got := byColumn[col]; got == nil || !bytes.Equal(got, want.value) || format[col] != want.format {
			t.Errorf("%s encoded as %q (nil %v) in format %d, want %q in format %d", col, got, got == nil, format[col], want.value, want.format)
		}
	}
	if d := binary.BigEndian.Uint64(byColumn["created_at"]); time.UnixMicro(int64(d)+946684800000000).UTC() != at.UTC().Truncate(time.Microsecond) {
		t.Errorf("created_at reads back as %v", time.UnixMicro(int64(d)+946684800000000))
	}

	amount := int64(5000)
	charge := &chargeRow{ID: "ch_1", PixTxID: &txid, SettlementAmount: &amount, Amount: -2, Metadata: `{"order":"1"}`, MethodsPending: true}
	cp := planInsertRows(pgdialect.New(), charge, 1)
	cvals, err := cp.encodeRow(nil, charge)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range cp.fields {
		got := cvals[i]
		switch name := strings.Trim(string(f.SQLName), `"`); name {
		case "pix_txid":
			if string(got) != txid {
				t.Errorf("pix_txid encoded as %q", got)
			}
		case "settlement_amount":
			if len(got) != 8 || binary.BigEndian.Uint64(got) != 5000 || cp.formats[i] != 1 {
				t.Errorf("settlement_amount encoded as %x in format %d, want 5000 as 8 bytes, binary", got, cp.formats[i])
			}
		case "amount":
			if len(got) != 8 || int64(binary.BigEndian.Uint64(got)) != -2 {
				t.Errorf("amount encoded as %x, want -2 as 8 bytes", got)
			}
		case "methods_pending":
			if !bytes.Equal(got, []byte{1}) || cp.formats[i] != 1 {
				t.Errorf("methods_pending encoded as %x in format %d, want 01, binary", got, cp.formats[i])
			}
		case "metadata": // jsonb: the JSON text itself
			if string(got) != `{"order":"1"}` || cp.formats[i] != 0 {
				t.Errorf("metadata (jsonb) encoded as %q in format %d", got, cp.formats[i])
			}
		case "pix_br_code", "created_at", "settlement_paid_at":
			if got != nil {
				t.Errorf("%s (nil pointer or zero instant) encoded as %q, want NULL", name, got)
			}
		}
	}

	if _, err := p.encodeRow(nil, &idempotencyRow{CreatedAt: dbTime{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}); err == nil {
		t.Error("an instant after year 9999 was encoded")
	}

	buf := make([][]byte, 0, len(p.fields))
	if n := testing.AllocsPerRun(100, func() {
		if _, err := p.encodeRow(buf[:0], row); err != nil {
			t.Fatal(err)
		}
	}); n > 1 {
		t.Errorf("encoding an idempotency record allocated %.0f times, want at most 1 (its buffer)", n)
	}
}

// TestPrepareRefusesAParameterOfAnotherType: a statement whose parameter
// Postgres types otherwise than its value is encoded for is refused before
// anything is sent — a boolean's byte would otherwise be stored as text.
func TestPrepareRefusesAParameterOfAnotherType(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, conn := migratedHotConn(t)
	field := planInsertRows(db.bun.Dialect(), new(chargeRow), 1).fields[0]
	for sql, ok := range map[string]bool{"SELECT $1::boolean": true, "SELECT $1::text": false} {
		p := &insertPlan{sql: sql, name: "test_" + strings.ReplaceAll(sql, " ", "_"), fields: []*schema.Field{field},
			kinds: []argKind{argBool}, formats: []int16{1}}
		_, err := p.prepare(ctx, conn.Conn())
		if (err == nil) != ok {
			t.Errorf("prepare(%q) for a boolean: %v", sql, err)
		}
	}
}

// TestBoundColumnsMatchTheSchema: every column the create's batch binds
// has a kind (none is argUnsupported) and the SQL type that kind is
// encoded for — text, integer or bigint for an int, bigint for an int64,
// boolean, bytea, timestamptz for instants — and the json/jsonb columns
// are exactly jsonColumns. A migration that changes a column's type fails
// here (and prepare refuses the statement at run time).
func TestBoundColumnsMatchTheSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openMigratedPostgres(t)
	want := map[argKind][]string{
		argText: {"text"}, argTextPtr: {"text"}, argJSON: {"json", "jsonb"}, argInt: {"integer", "bigint"},
		argInt8: {"bigint"}, argInt8Ptr: {"bigint"}, argBool: {"boolean"}, argBytes: {"bytea"},
		argTime: {"timestamp with time zone"},
	}
	for _, model := range []any{new(chargeRow), new(eventRow), new(idempotencyRow), new(statDeltaRow)} {
		table := db.bun.Dialect().Tables().Get(reflect.TypeOf(model).Elem()).Name
		p := planInsertRows(db.bun.Dialect(), model, 1)
		for i, f := range p.fields {
			var typ string
			err := db.hot.QueryRow(ctx, `SELECT data_type FROM information_schema.columns
				WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2`, table, f.Name).Scan(&typ)
			if err != nil {
				t.Fatalf("%s.%s: %v", table, f.Name, err)
			}
			isJSON := typ == "json" || typ == "jsonb"
			if isJSON != jsonColumns[table+"."+f.Name] {
				t.Errorf("%s.%s is %s: jsonColumns says %v", table, f.Name, typ, jsonColumns[table+"."+f.Name])
			}
			if types := want[p.kinds[i]]; !slices.Contains(types, typ) {
				t.Errorf("%s.%s is %s, bound as kind %d (for %v)", table, f.Name, typ, p.kinds[i], types)
			}
		}
	}
}

var optSink *string

// TestOptStringAllocatesOnlyAValue: an empty optional column is NULL at no
// cost; only a value is copied (a pix charge has ten empty ones).
func TestOptStringAllocatesOnlyAValue(t *testing.T) {
	empty, value := "", "x"
	if n := testing.AllocsPerRun(100, func() { optSink = optString(empty) }); n != 0 || optSink != nil {
		t.Errorf("optString(\"\") = %v, %.0f allocations; want nil and none", optSink, n)
	}
	if n := testing.AllocsPerRun(100, func() { optSink = optString(value) }); n != 1 || optSink == nil || *optSink != "x" {
		t.Errorf("optString(\"x\") = %v, %.0f allocations; want a copy, one", optSink, n)
	}
}

// TestEncodeRowSizesItsBufferFromOrdinaryRows: a row's buffer is sized
// from the rows before it, but one large row does not make every later
// buffer as large.
func TestEncodeRowSizesItsBufferFromOrdinaryRows(t *testing.T) {
	shared := planInsertRows(pgdialect.New(), new(eventRow), 1)
	p := &insertPlan{fields: shared.fields, kinds: shared.kinds} // a plan of its own: the test moves its hint
	p.size.Store(256)
	if _, err := p.encodeRow(nil, &eventRow{ID: "evt_1", Payload: make([]byte, 1000)}); err != nil {
		t.Fatal(err)
	}
	ordinary := p.size.Load()
	if ordinary < 1000 {
		t.Fatalf("after a 1 KB row the hint is %d bytes", ordinary)
	}
	if _, err := p.encodeRow(nil, &eventRow{ID: "evt_2", Payload: make([]byte, 64<<10)}); err != nil {
		t.Fatal(err)
	}
	if got := p.size.Load(); got != ordinary {
		t.Errorf("after a 64 KB row the hint is %d bytes, want it kept at %d", got, ordinary)
	}
}
