package store

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"
)

// TestAppendArgsBindsPointersIntoTheRow: a create's values reach pgx as
// pointers into its row (no copy boxed per value, issue 17), a nil
// pointer and a zero instant as NULL, an instant in UTC to the
// microsecond — and binding a row allocates only for its instants.
func TestAppendArgsBindsPointersIntoTheRow(t *testing.T) {
	brt := time.FixedZone("BRT", -3*3600)
	at := time.Date(2026, 11, 27, 9, 30, 0, 123456789, brt)
	txid := "txid0001"
	row := &idempotencyRow{AccountID: "acct_1", Mode: "live", Key: "key-0001", Fingerprint: "fp", ResourceID: "ch_1",
		StatusCode: 201, Body: []byte(`{"id":"ch_1"}`), CreatedAt: dbTime{at}}
	p := planInsertRows(pgdialect.New(), row, 1)

	args, err := p.appendArgs([]any{"before"}, row)
	if err != nil {
		t.Fatal(err)
	}
	if len(args) != 1+len(p.fields) || args[0] != "before" {
		t.Fatalf("appendArgs kept %v and added %d values for %d columns", args[:1], len(args)-1, len(p.fields))
	}
	byColumn := map[string]any{}
	for i, f := range p.fields {
		byColumn[strings.Trim(string(f.SQLName), `"`)] = args[1+i]
	}
	if k, ok := byColumn["key"].(*textArg); !ok || (*string)(k) != &row.Key {
		t.Errorf("key bound as %T %v, want a pointer to the row's field", byColumn["key"], byColumn["key"])
	}
	if b, ok := byColumn["body"].(*bytesArg); !ok || (*[]byte)(b) != &row.Body {
		t.Errorf("body bound as %T, want a pointer to the row's field", byColumn["body"])
	}
	if s, ok := byColumn["status_code"].(*int); !ok || s != &row.StatusCode {
		t.Errorf("status_code bound as %T, want a pointer to the row's field", byColumn["status_code"])
	}
	if got, ok := byColumn["created_at"].(time.Time); !ok || !got.Equal(at.Truncate(time.Microsecond)) || got.Location() != time.UTC {
		t.Errorf("created_at bound as %#v, want %v in UTC to the microsecond", byColumn["created_at"], at.UTC().Truncate(time.Microsecond))
	}

	amount := int64(5000)
	charge := &chargeRow{ID: "ch_1", PixTxID: &txid, SettlementAmount: &amount, Metadata: `{"order":"1"}`, MethodsPending: true}
	cp := planInsertRows(pgdialect.New(), charge, 1)
	cargs, err := cp.appendArgs(nil, charge)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range cp.fields {
		switch name := strings.Trim(string(f.SQLName), `"`); name {
		case "pix_txid":
			if p, ok := cargs[i].(*textArg); !ok || (*string)(p) != &txid {
				t.Errorf("pix_txid bound as %#v, want the row's own pointer", cargs[i])
			}
		case "settlement_amount":
			if p, ok := cargs[i].(*int8Arg); !ok || (*int64)(p) != &amount {
				t.Errorf("settlement_amount bound as %#v, want the row's own pointer", cargs[i])
			}
		case "amount":
			if p, ok := cargs[i].(*int8Arg); !ok || (*int64)(p) != &charge.Amount {
				t.Errorf("amount bound as %#v, want a pointer to the row's field", cargs[i])
			}
		case "methods_pending":
			if p, ok := cargs[i].(*boolArg); !ok || (*bool)(p) != &charge.MethodsPending {
				t.Errorf("methods_pending bound as %#v, want a pointer to the row's field", cargs[i])
			}
		case "metadata": // jsonb: pgx must see the JSON text itself
			if p, ok := cargs[i].(*string); !ok || p != &charge.Metadata {
				t.Errorf("metadata (jsonb) bound as %#v, want the row's *string", cargs[i])
			}
		case "pix_br_code", "created_at", "settlement_paid_at":
			if cargs[i] != nil {
				t.Errorf("%s (nil pointer or zero instant) bound as %#v, want NULL", name, cargs[i])
			}
		}
	}

	buf := make([]any, 0, len(p.fields))
	if n := testing.AllocsPerRun(100, func() {
		if _, err := p.appendArgs(buf[:0], row); err != nil {
			t.Fatal(err)
		}
	}); n > 1 {
		t.Errorf("binding an idempotency record allocated %.0f times, want at most 1 (its instant)", n)
	}
}

// TestBoundColumnsMatchTheSchema: every column the create's batch binds
// has the SQL type its bind kind is encoded for — text for textArg,
// bigint for int8Arg, boolean, bytea, timestamptz for instants — and the
// json/jsonb columns are exactly jsonColumns, bound as plain strings. A
// migration that changes a column's type fails here before pgx would
// encode it wrongly (a textArg into jsonb is marshalled as a JSON string).
func TestBoundColumnsMatchTheSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openMigratedPostgres(t)
	want := map[argKind][]string{
		argText: {"text"}, argTextPtr: {"text"}, argInt8: {"bigint"}, argInt8Ptr: {"bigint"},
		argBool: {"boolean"}, argBytes: {"bytea"}, argTime: {"timestamp with time zone"},
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
			if types, ok := want[p.kinds[i]]; ok && !slices.Contains(types, typ) {
				t.Errorf("%s.%s is %s, bound as kind %d (for %v)", table, f.Name, typ, p.kinds[i], types)
			}
		}
	}
}
