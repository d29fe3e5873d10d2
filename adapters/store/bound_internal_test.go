package store

import (
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
	if k, ok := byColumn["key"].(*string); !ok || k != &row.Key {
		t.Errorf("key bound as %T %v, want a pointer to the row's field", byColumn["key"], byColumn["key"])
	}
	if b, ok := byColumn["body"].(*[]byte); !ok || b != &row.Body {
		t.Errorf("body bound as %T, want a pointer to the row's field", byColumn["body"])
	}
	if s, ok := byColumn["status_code"].(*int); !ok || s != &row.StatusCode {
		t.Errorf("status_code bound as %T, want a pointer to the row's field", byColumn["status_code"])
	}
	if got, ok := byColumn["created_at"].(time.Time); !ok || !got.Equal(at.Truncate(time.Microsecond)) || got.Location() != time.UTC {
		t.Errorf("created_at bound as %#v, want %v in UTC to the microsecond", byColumn["created_at"], at.UTC().Truncate(time.Microsecond))
	}

	charge := &chargeRow{ID: "ch_1", PixTxID: &txid}
	cp := planInsertRows(pgdialect.New(), charge, 1)
	cargs, err := cp.appendArgs(nil, charge)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range cp.fields {
		switch name := strings.Trim(string(f.SQLName), `"`); name {
		case "pix_txid":
			if cargs[i] != &txid {
				t.Errorf("pix_txid bound as %v, want the row's own pointer", cargs[i])
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
