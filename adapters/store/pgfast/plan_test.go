package pgfast

import (
	"bytes"
	"context"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/schema"

	"github.com/quitapix/quita/internal/testenv"
)

// stamp is an instant field as a store has one: time.Time embedded.
type stamp struct{ time.Time }

// testRow has a field of every kind Encode knows.
type testRow struct {
	bun.BaseModel `bun:"table:test_rows"`

	Seq     int64   `bun:"seq,scanonly"`
	Text    string  `bun:"text"`
	Opt     *string `bun:"opt"`
	Doc     string  `bun:"doc"`
	Count   int     `bun:"count"`
	Amount  int64   `bun:"amount"`
	Settled *int64  `bun:"settled"`
	Flag    bool    `bun:"flag"`
	Body    []byte  `bun:"body"`
	At      stamp   `bun:"at"`
	Never   stamp   `bun:"never"`
}

func testTables() *Tables { return NewTables(pgdialect.New(), "test_rows.doc") }

// TestEncodeWritesEachKind: text as its bytes, a json column's string as
// its text, int as decimal text, int64 as 8 bytes big-endian, a bool as
// one byte, bytes as they are and an instant as microseconds since
// 2000-01-01 UTC — integers, booleans, bytea and instants in binary
// format; a nil pointer, a nil slice or a zero instant is NULL; a
// scan-only field is not written; and a row costs one buffer.
func TestEncodeWritesEachKind(t *testing.T) {
	at := time.Date(2026, 11, 27, 9, 30, 0, 123456789, time.FixedZone("BRT", -3*3600))
	amount := int64(-2)
	row := &testRow{Seq: 9, Text: "ab", Doc: `{"a":1}`, Count: 201, Amount: amount, Flag: true, Body: []byte{0, 1}, At: stamp{at}}
	p := testTables().Insert(row, 1)
	vals, err := p.Encode(nil, row)
	if err != nil {
		t.Fatal(err)
	}
	micros := binary.BigEndian.AppendUint64(nil, uint64(at.UnixMicro()-pgEpochMicros))
	want := map[string]struct {
		value  []byte
		format int16
	}{
		"text": {[]byte("ab"), 0}, "opt": {nil, 0}, "doc": {[]byte(`{"a":1}`), 0}, "count": {[]byte("201"), 0},
		"amount": {binary.BigEndian.AppendUint64(nil, uint64(amount)), 1}, "settled": {nil, 1}, "flag": {[]byte{1}, 1},
		"body": {[]byte{0, 1}, 1}, "at": {micros, 1}, "never": {nil, 1},
	}
	if p.Columns() != len(want) || len(vals) != len(want) {
		t.Fatalf("%d columns, %d values; want %d (seq is scan-only)", p.Columns(), len(vals), len(want))
	}
	for i := range p.Columns() {
		name, format := p.Column(i)
		w := want[name]
		if !bytes.Equal(vals[i], w.value) || (vals[i] == nil) != (w.value == nil) || format != w.format {
			t.Errorf("%s encoded as %x (nil %v) in format %d, want %x in format %d", name, vals[i], vals[i] == nil, format, w.value, w.format)
		}
	}
	if p.kinds[2] != argJSON {
		t.Errorf("doc, listed as a json column, is kind %d", p.kinds[2])
	}
	if _, err := p.Encode(nil, &testRow{At: stamp{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}); err == nil {
		t.Error("an instant after year 9999 was encoded")
	}
	buf := make([][]byte, 0, p.Columns())
	if n := testing.AllocsPerRun(100, func() {
		if _, err := p.Encode(buf[:0], row); err != nil {
			t.Fatal(err)
		}
	}); n > 1 {
		t.Errorf("encoding a row allocated %.0f times, want at most 1 (its buffer)", n)
	}
}

// TestInsertPlansRowsInOneStatement: the plan of n rows binds one
// parameter per column and row, numbered in order.
func TestInsertPlansRowsInOneStatement(t *testing.T) {
	p := testTables().Insert((*testRow)(nil), 2)
	if !strings.HasPrefix(p.sql, `INSERT INTO "test_rows" (`) || !strings.HasSuffix(p.sql, "($11, $12, $13, $14, $15, $16, $17, $18, $19, $20)") ||
		len(p.formats) != 20 {
		t.Errorf("plan of 2 rows: %s with %d formats", p.sql, len(p.formats))
	}
}

// TestEncodeSizesItsBufferFromOrdinaryRows: a row's buffer is sized from
// the rows before it, but one large row does not make every later buffer
// as large.
func TestEncodeSizesItsBufferFromOrdinaryRows(t *testing.T) {
	shared := testTables().Insert((*testRow)(nil), 1)
	p := &InsertPlan{fields: shared.fields, kinds: shared.kinds} // a plan of its own: the test moves its hint
	p.size.Store(256)
	if _, err := p.Encode(nil, &testRow{Body: make([]byte, 1000)}); err != nil {
		t.Fatal(err)
	}
	ordinary := p.size.Load()
	if ordinary < 1000 {
		t.Fatalf("after a 1 KB row the hint is %d bytes", ordinary)
	}
	if _, err := p.Encode(nil, &testRow{Body: make([]byte, 64<<10)}); err != nil {
		t.Fatal(err)
	}
	if got := p.size.Load(); got != ordinary {
		t.Errorf("after a 64 KB row the hint is %d bytes, want it kept at %d", got, ordinary)
	}
}

// TestPrepareRefusesAParameterOfAnotherType: a statement whose parameter
// Postgres types otherwise than its value is encoded for is refused before
// anything is sent — a boolean's byte would otherwise be stored as text.
func TestPrepareRefusesAParameterOfAnotherType(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testenv.PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	field := testTables().Insert((*testRow)(nil), 1).fields[0]
	for sql, ok := range map[string]bool{"SELECT $1::boolean": true, "SELECT $1::text": false} {
		p := &InsertPlan{sql: sql, name: "test_" + strings.ReplaceAll(sql, " ", "_"), fields: []*schema.Field{field},
			kinds: []argKind{argBool}, formats: []int16{1}}
		_, err := p.Prepare(ctx, conn)
		if (err == nil) != ok {
			t.Errorf("Prepare(%q) for a boolean: %v", sql, err)
		}
	}
}
