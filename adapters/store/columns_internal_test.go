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

	"github.com/quitapix/quita/adapters/store/pgfast"
)

// TestEncodeRowWritesTheWireValues: a create's rows are encoded for the
// wire by its own goroutine — text as its bytes, integers, booleans and
// instants in Postgres's binary formats (an instant in UTC to the
// microsecond from 2000-01-01), the charge's jsonb metadata as its JSON
// text, an empty string as an empty value and a nil pointer, a nil slice
// or a zero instant as NULL — and encoding a row allocates only its one
// buffer.
func TestEncodeRowWritesTheWireValues(t *testing.T) {
	tables := pgfast.NewTables(pgdialect.New(), jsonColumns...)
	brt := time.FixedZone("BRT", -3*3600)
	at := time.Date(2026, 11, 27, 9, 30, 0, 123456789, brt)
	txid := "txid0001"
	row := &idempotencyRow{AccountID: "acct_1", Mode: "live", Key: "key-0001", Fingerprint: "", ResourceID: "ch_1",
		StatusCode: 201, Body: []byte(`{"id":"ch_1"}`), CreatedAt: dbTime{at}}
	p := tables.Insert(row, 1)

	vals, err := p.Encode([][]byte{[]byte("before")}, row)
	if err != nil {
		t.Fatal(err)
	}
	if len(vals) != 1+p.Columns() || string(vals[0]) != "before" {
		t.Fatalf("Encode kept %q and added %d values for %d columns", vals[:1], len(vals)-1, p.Columns())
	}
	byColumn := map[string][]byte{}
	format := map[string]int16{}
	for i := range p.Columns() {
		name, f := p.Column(i)
		byColumn[name], format[name] = vals[1+i], f
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
	cp := tables.Insert(charge, 1)
	cvals, err := cp.Encode(nil, charge)
	if err != nil {
		t.Fatal(err)
	}
	for i := range cp.Columns() {
		got := cvals[i]
		switch name, f := cp.Column(i); name {
		case "pix_txid":
			if string(got) != txid {
				t.Errorf("pix_txid encoded as %q", got)
			}
		case "settlement_amount":
			if len(got) != 8 || binary.BigEndian.Uint64(got) != 5000 || f != 1 {
				t.Errorf("settlement_amount encoded as %x in format %d, want 5000 as 8 bytes, binary", got, f)
			}
		case "amount":
			if len(got) != 8 || int64(binary.BigEndian.Uint64(got)) != -2 {
				t.Errorf("amount encoded as %x, want -2 as 8 bytes", got)
			}
		case "methods_pending":
			if !bytes.Equal(got, []byte{1}) || f != 1 {
				t.Errorf("methods_pending encoded as %x in format %d, want 01, binary", got, f)
			}
		case "metadata": // jsonb: the JSON text itself
			if string(got) != `{"order":"1"}` || f != 0 {
				t.Errorf("metadata (jsonb) encoded as %q in format %d", got, f)
			}
		case "pix_br_code", "created_at", "settlement_paid_at":
			if got != nil {
				t.Errorf("%s (nil pointer or zero instant) encoded as %q, want NULL", name, got)
			}
		}
	}

	if _, err := p.Encode(nil, &idempotencyRow{CreatedAt: dbTime{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}); err == nil {
		t.Error("an instant after year 9999 was encoded")
	}

	buf := make([][]byte, 0, p.Columns())
	if n := testing.AllocsPerRun(100, func() {
		if _, err := p.Encode(buf[:0], row); err != nil {
			t.Fatal(err)
		}
	}); n > 1 {
		t.Errorf("encoding an idempotency record allocated %.0f times, want at most 1 (its buffer)", n)
	}
}

// TestFastColumnsMatchTheSchema: every column a create's batch binds is
// typed by Postgres as its value is encoded — text, integer or bigint for
// an int, bigint for an int64, boolean, bytea, timestamptz for instants
// (pgfast's Prepare refuses any other type, and a field it cannot encode)
// — and the json/jsonb columns are exactly jsonColumns. A migration that
// changes a column's type fails here (and Prepare refuses the statement
// at run time).
func TestFastColumnsMatchTheSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, conn := migratedFastConn(t)
	tables := db.charges.(*pgCharges).tables
	for _, model := range []any{new(chargeRow), new(eventRow), new(idempotencyRow), new(statDeltaRow)} {
		table := db.bun.Dialect().Tables().Get(reflect.TypeOf(model).Elem()).Name
		p := tables.Insert(model, 1)
		if _, err := p.Prepare(ctx, conn.Conn()); err != nil {
			t.Errorf("%s: %v", table, err)
		}
		for i := range p.Columns() {
			name, _ := p.Column(i)
			var typ string
			err := conn.QueryRow(ctx, `SELECT data_type FROM information_schema.columns
				WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2`, table, name).Scan(&typ)
			if err != nil {
				t.Fatalf("%s.%s: %v", table, name, err)
			}
			isJSON := typ == "json" || typ == "jsonb"
			if listed := slices.Contains(jsonColumns, table+"."+name); isJSON != listed {
				t.Errorf("%s.%s is %s: jsonColumns lists it: %v", table, name, typ, listed)
			}
		}
	}
	if got := strings.Join(jsonColumns, ","); got != "charges.methods,charges.metadata" {
		t.Errorf("jsonColumns %s", got)
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
