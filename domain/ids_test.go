package domain_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

// timedRawID is an id of the current layout (chargeRawID is a legacy one).
const timedRawID = "3ocl2hmk22632a3272s5kk4ce3ga2u5kj42"

// idsAPIPixID is the API Pix's shape of an id the caller chooses (a
// devolução's).
var idsAPIPixID = regexp.MustCompile(`^[a-zA-Z0-9]{1,35}$`)

var idsRawShape = regexp.MustCompile(`^[a-z2-7]{35}$`)

func TestNewRawID(t *testing.T) {
	t.Parallel()
	seen := make(map[string]bool, 2000)
	for range 2000 {
		id, err := domain.NewRawID(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if len(id) != domain.RawIDLen || !idsRawShape.MatchString(id) {
			t.Fatalf("NewRawID = %q, want 35 characters of [a-z2-7]", id)
		}
		if !domain.ValidRawID(id) {
			t.Fatalf("ValidRawID(%q) = false for a fresh id", id)
		}
		// A refund's raw id is its devolução's id in the API Pix.
		if !idsAPIPixID.MatchString(id) {
			t.Fatalf("NewRawID = %q, not an id the API Pix takes", id)
		}
		if seen[id] {
			t.Fatalf("NewRawID returned %q twice", id)
		}
		seen[id] = true
	}
}

// The encoding is 45 bits of Unix milliseconds, then 130 random bits, 5
// bits a character over [2-7a-z] in byte order; these vectors come from a
// separate Python encoder of that layout.
func TestNewRawIDEncoding(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) // 1795867200000 ms
	seq := make([]byte, 17)
	for i := range seq {
		seq[i] = byte(i + 1)
	}
	tests := []struct {
		at   time.Time
		in   []byte
		want string
	}{
		{time.UnixMilli(0), make([]byte, 17), strings.Repeat("2", 35)},
		{time.UnixMilli(0), bytes.Repeat([]byte{0xff}, 17), strings.Repeat("2", 9) + strings.Repeat("z", 26)},
		{time.UnixMilli(0), append(bytes.Repeat([]byte{0xff}, 17), 0x01), strings.Repeat("2", 9) + strings.Repeat("z", 26)}, // reads only 17 bytes
		{at, seq, "3ocl2hmk22632a3272s5kk4ce3ga2u5kj42"},
		{time.UnixMilli(1<<45 - 1), make([]byte, 17), strings.Repeat("z", 9) + strings.Repeat("2", 26)}, // the year 3085
		{time.UnixMilli(1 << 45), make([]byte, 17), strings.Repeat("2", 35)},                            // and then round again
	}
	for _, tt := range tests {
		got, err := domain.NewRawIDAt(tt.at, bytes.NewReader(tt.in))
		if err != nil || got != tt.want {
			t.Errorf("NewRawIDAt(%d ms, % x) = %q, %v; want %q", tt.at.UnixMilli(), tt.in, got, err, tt.want)
		}
	}
}

// Ids sort by the millisecond they were made, whatever their random bits:
// what keeps a table's new rows at the end of its primary key.
func TestNewRawIDSortsByTime(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	prev := ""
	for i := range 5000 {
		// Steps of 1 ms to over a day, so every character of the time
		// part turns over.
		at := start.Add(time.Duration(i*i*7) * time.Millisecond)
		id, err := domain.NewRawIDAt(at, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if id <= prev {
			t.Fatalf("id made at %v = %q, not after the one made before it, %q", at, id, prev)
		}
		prev = id
	}
	// Within one millisecond the order is the random bits'.
	a, _ := domain.NewRawIDAt(start, bytes.NewReader(bytes.Repeat([]byte{0xff}, 17)))
	b, _ := domain.NewRawIDAt(start.Add(time.Millisecond), bytes.NewReader(make([]byte, 17)))
	if a >= b {
		t.Errorf("the last id of a millisecond %q sorts after the first of the next, %q", a, b)
	}
}

func TestNewRawIDShortRead(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 16} {
		id, err := domain.NewRawID(bytes.NewReader(make([]byte, n)))
		if id != "" || err == nil {
			t.Errorf("%d random bytes: NewRawID = %q, %v; want an error", n, id, err)
		}
	}
	boom := errors.New("no entropy")
	if _, err := domain.NewRawID(io.MultiReader(bytes.NewReader([]byte{1}), idsErrReader{boom})); !errors.Is(err, boom) {
		t.Errorf("NewRawID = %v, want it to wrap %v", err, boom)
	}
}

type idsErrReader struct{ err error }

func (r idsErrReader) Read([]byte) (int, error) { return 0, r.err }

func TestValidRawID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{chargeRawID, true},
		{timedRawID, true},
		{strings.Repeat("2", 26), true},
		{strings.Repeat("2", 35), true},
		{strings.Repeat("z", 35), true},
		{timedRawID[:34], false},
		{timedRawID[:27], false},
		{timedRawID + "a", false},
		{timedRawID[:34] + "1", false},
		{timedRawID[:34] + "A", false},
		{strings.Repeat("7", 26), true},
		{"", false},
		{chargeRawID[:25], false},
		{chargeRawID + "a", false},
		{strings.ToUpper(chargeRawID), false},
		{strings.Repeat("1", 26), false},
		{strings.Repeat("8", 26), false},
		{strings.Repeat("0", 26), false},
		{chargeRawID[:25] + "_", false},
		{chargeRawID[:25] + "-", false},
		{chargeRawID[:24] + "é", false}, // 26 bytes, not 26 characters of the alphabet
	}
	for _, tt := range tests {
		if got := domain.ValidRawID(tt.in); got != tt.want {
			t.Errorf("ValidRawID(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestParseChargeID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		wantRaw string
		wantOK  bool
	}{
		{chargeRawID, chargeRawID, true},
		{"ch_" + chargeRawID, chargeRawID, true},
		{"tx_" + chargeRawID, chargeRawID, true},
		{"", "", false},
		{"ch_", "", false},
		{"tx_", "", false},
		{"CH_" + chargeRawID, "", false},
		{"evt_" + chargeRawID, "", false},
		{"re_" + chargeRawID, "", false},
		{"ch_tx_" + chargeRawID, "", false},
		{"ch_" + chargeRawID + "a", "", false},
		{" ch_" + chargeRawID, "", false},
		{"ch_" + strings.ToUpper(chargeRawID), "", false},
		{"ch-" + chargeRawID, "", false},
	}
	for _, tt := range tests {
		raw, ok := domain.ParseChargeID(tt.in)
		if ok != tt.wantOK || (ok && raw != tt.wantRaw) {
			t.Errorf("ParseChargeID(%q) = %q, %v; want %q, %v", tt.in, raw, ok, tt.wantRaw, tt.wantOK)
		}
	}
}

var idsTxIDShape = regexp.MustCompile(`^[0-9a-z]{32}$`)

// A retry of the same create must ask the acquirer for the same cob, across
// processes and releases, so the derivation is pinned by vectors computed
// independently (Python hashlib: sha256 of "<len>:<part>;" per part, each of
// the first 32 bytes mod 36 into [0-9a-z]).
func TestDeriveTxIDVectors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		parts []string
		want  string
	}{
		{[]string{"acct_1", "live", "order-1234"}, "b8wpt10vj7t9bmssqgivwqodsnf3kyd2"},
		{nil, "bwgu80skazsk93503utcsb34k59rca4d"},
		{[]string{"refund", "acct_1", strings.Repeat("x", 300)}, "jfrkyl0hal0ir4ib6pcbl3w470gaz09o"}, // past the stack buffer
		{[]string{"acct_ç", "test", "pedido-ção"}, "byqfcb4tdtckwfl6wepzd9nyl4vvqhri"},               // lengths in bytes
	}
	for _, tt := range tests {
		if got := domain.DeriveTxID(tt.parts...); got != tt.want {
			t.Errorf("DeriveTxID(%q) = %q, want %q", tt.parts, got, tt.want)
		}
	}
}

func TestDeriveTxID(t *testing.T) {
	t.Parallel()
	a := domain.DeriveTxID("acct_1", "live", "order-1234")
	if b := domain.DeriveTxID("acct_1", "live", "order-1234"); a != b {
		t.Errorf("DeriveTxID is not deterministic: %q then %q", a, b)
	}
	if !idsTxIDShape.MatchString(a) || !domain.ValidTxID(a) {
		t.Errorf("DeriveTxID = %q, want 32 characters of [0-9a-z] that ValidTxID accepts", a)
	}

	// Each of these differs from the first in scope only; none may collide,
	// or two merchants (or modes, or keys) would share one cob.
	variants := [][]string{
		{"acct_2", "live", "order-1234"},
		{"acct_1", "test", "order-1234"},
		{"acct_1", "live", "order-1235"},
		{"live", "acct_1", "order-1234"},
		{"acct_1live", "order-1234"},
		{"acct_1", "liveorder-1234"},
		{"acct_1", "live", "order-1234", ""},
		{"acct_1", "live:", "order-1234"},
		{"acct_1", "live", "ORDER-1234"},
		{},
		{""},
	}
	seen := map[string]string{a: "original"}
	for _, v := range variants {
		id := domain.DeriveTxID(v...)
		if prev, dup := seen[id]; dup {
			t.Errorf("DeriveTxID(%q) = %q, same as %s", v, id, prev)
		}
		seen[id] = fmt.Sprintf("%q", v)
		if !domain.ValidTxID(id) {
			t.Errorf("DeriveTxID(%q) = %q, not a valid txid", v, id)
		}
	}
}

// Rule 1 of the public charge: id never equals pix.txid. A derived txid is
// never a raw id, nor any charge-id form of one.
func TestDeriveTxIDNeverEqualsAChargeID(t *testing.T) {
	t.Parallel()
	seen := make(map[string]bool, 5000)
	for i := range 5000 {
		raw, err := domain.NewRawID(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		txid := domain.DeriveTxID("acct_1", "live", raw)
		if txid == raw || domain.ValidRawID(txid) {
			t.Fatalf("DeriveTxID(%q) = %q has the shape of a raw id", raw, txid)
		}
		if _, ok := domain.ParseChargeID(txid); ok {
			t.Fatalf("ParseChargeID accepts the txid %q as a charge id", txid)
		}
		if seen[txid] {
			t.Fatalf("txid %q derived twice after %d ids", txid, i)
		}
		seen[txid] = true
	}
}

// A cob asked for under a fresh id gets a txid that sorts by the time the
// id was made (the charges' txid index takes it at its end), is a valid
// txid, and is never a charge id.
func TestCobTxID(t *testing.T) {
	t.Parallel()
	if got, want := domain.CobTxID(timedRawID), timedRawID[:9]+domain.DeriveTxID("cob", timedRawID)[:23]; got != want {
		t.Errorf("CobTxID(%q) = %q, want %q", timedRawID, got, want)
	}
	if got, want := domain.CobTxID(chargeRawID), domain.DeriveTxID("cob", chargeRawID); got != want {
		t.Errorf("CobTxID(legacy %q) = %q, want DeriveTxID's %q", chargeRawID, got, want)
	}
	start := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	prev := ""
	seen := map[string]bool{}
	for i := range 2000 {
		raw, err := domain.NewRawIDAt(start.Add(time.Duration(i*i)*time.Millisecond), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		txid := domain.CobTxID(raw)
		if !idsTxIDShape.MatchString(txid) || !domain.ValidTxID(txid) {
			t.Fatalf("CobTxID(%q) = %q, want 32 characters of [0-9a-z]", raw, txid)
		}
		if txid <= prev || seen[txid] {
			t.Fatalf("CobTxID(%q) = %q, not after the one before it, %q", raw, txid, prev)
		}
		if _, ok := domain.ParseChargeID(txid); ok {
			t.Fatalf("CobTxID(%q) = %q, which parses as a charge id", raw, txid)
		}
		prev, seen[txid] = txid, true
	}
}
