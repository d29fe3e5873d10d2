package brcode_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/quitapix/quita/domain/brcode"
)

// FuzzParse feeds the parser what a payer might paste. It must never
// panic, and whatever it accepts must re-encode to a code that decodes to
// the same fields: otherwise Quita could read a partner's code and re-issue
// a different one. Random bytes almost never carry a matching CRC, so each
// input is also tried with a correct tag 63 appended; that lets the fuzzer
// reach the field rules instead of stopping at the checksum.
func FuzzParse(f *testing.F) {
	for _, v := range vectors(f) {
		f.Add(v)
		f.Add(v[:len(v)-4] + strings.ToLower(v[len(v)-4:]))
		f.Add(v[:len(v)/2])
	}
	f.Add(seal(staticBody(map[string]string{"54": "100.5", "62": tlv("05", "ABC") + tlv("50", "x")})))
	f.Add(seal(staticBody(map[string]string{"62": "-"}) + tlv("61", "50000000")))
	f.Add("")
	f.Add("6304")

	f.Fuzz(func(t *testing.T, s string) {
		roundTrip(t, s)
		if len(s) >= 8 {
			roundTrip(t, seal(s[:len(s)-8]))
		}
		roundTrip(t, seal(s))
	})
}

// roundTrip asserts the fuzz property for one candidate payload.
func roundTrip(t *testing.T, s string) {
	t.Helper()
	b, err := brcode.Parse(s)
	if err != nil {
		if b != nil {
			t.Fatalf("Parse returned %+v with error %v", b, err)
		}
		return
	}
	enc, err := b.Encode()
	if err != nil {
		t.Fatalf("parsed %q to %+v, which does not encode: %v", s, b, err)
	}
	again, err := brcode.Parse(enc)
	if err != nil {
		t.Fatalf("re-encoded %q to %q, which does not parse: %v", s, enc, err)
	}
	if !reflect.DeepEqual(b, again) {
		t.Fatalf("round trip changed the fields:\n first %+v\nsecond %+v", b, again)
	}
	if enc2, _ := again.Encode(); enc2 != enc {
		t.Fatalf("encoding is not stable: %q then %q", enc, enc2)
	}
}
