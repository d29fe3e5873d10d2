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

	"github.com/quitapix/quita/domain"
)

var idsRawShape = regexp.MustCompile(`^[a-z2-7]{26}$`)

func TestNewRawID(t *testing.T) {
	t.Parallel()
	seen := make(map[string]bool, 2000)
	for range 2000 {
		id, err := domain.NewRawID(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if len(id) != domain.RawIDLen || !idsRawShape.MatchString(id) {
			t.Fatalf("NewRawID = %q, want 26 characters of [a-z2-7]", id)
		}
		if !domain.ValidRawID(id) {
			t.Fatalf("ValidRawID(%q) = false for a fresh id", id)
		}
		if seen[id] {
			t.Fatalf("NewRawID returned %q twice", id)
		}
		seen[id] = true
	}
}

// The encoding is base32 (RFC 4648 alphabet, lower case, no padding) of
// exactly 16 bytes; these vectors come from Python's base64.b32encode.
func TestNewRawIDEncoding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   []byte
		want string
	}{
		{bytes.Repeat([]byte{0}, 16), strings.Repeat("a", 26)},
		{bytes.Repeat([]byte{0xff}, 16), strings.Repeat("7", 25) + "4"},
		{append(bytes.Repeat([]byte{0xff}, 16), 0x01), strings.Repeat("7", 25) + "4"}, // reads only 16 bytes
	}
	for _, tt := range tests {
		got, err := domain.NewRawID(bytes.NewReader(tt.in))
		if err != nil || got != tt.want {
			t.Errorf("NewRawID(% x) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestNewRawIDShortRead(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 15} {
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
		{strings.Repeat("2", 26), true},
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
