package brcode_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/quitapix/quita/domain/brcode"
)

func TestParseBRCodeAmount(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"1", 100},
		{"100.5", 10050},
		{"10.00", 1000},
		{"0.01", 1},
		{"0.29", 29}, // 0.29*100 is 28.999... in float64
		{"007.1", 710},
		{"9999999999.99", 999_999_999_999},
	} {
		b, err := brcode.Parse(seal(staticBody(map[string]string{"54": tc.in})))
		if err != nil {
			t.Errorf("amount %q: %v", tc.in, err)
			continue
		}
		if b.Amount != tc.want {
			t.Errorf("amount %q = %d centavos, want %d", tc.in, b.Amount, tc.want)
		}
	}
	b, err := brcode.Parse(seal(staticBody(map[string]string{"54": "-"})))
	if err != nil || b.Amount != 0 {
		t.Errorf("absent amount: %+v, %v", b, err)
	}
}

func TestParseBRCodeRejects(t *testing.T) {
	t.Parallel()
	vec := vectors(t)[0]
	body := func(replace map[string]string) string { return seal(staticBody(replace)) }
	for _, tc := range []struct {
		name string
		in   string
		want error
	}{
		{"empty", "", brcode.ErrMalformed},
		{"bad CRC", vec[:len(vec)-1] + "E", brcode.ErrChecksum},
		{"content altered, CRC kept", strings.Replace(vec, "Fulano", "Fulana", 1), brcode.ErrChecksum},
		{"CRC not hex", vec[:len(vec)-4] + "1G3D", brcode.ErrMalformed},
		{"truncated in the CRC", vec[:len(vec)-2], brcode.ErrMalformed},
		{"truncated in the middle", vec[:40], brcode.ErrMalformed},
		{"trailing newline", vec + "\n", brcode.ErrMalformed},
		{"no CRC tag", staticBody(nil), brcode.ErrMalformed},
		{"length not digits", seal(strings.Replace(staticBody(nil), "5802BR", "58x2BR", 1)), brcode.ErrMalformed},
		{"length too short", seal(strings.Replace(staticBody(nil), "5802BR", "5801BR", 1)), brcode.ErrMalformed},
		{"length past the end", seal(staticBody(nil) + "8099x"), brcode.ErrMalformed},
		{"zero length", seal(staticBody(nil) + "8000"), brcode.ErrMalformed},
		{"tag not digits", seal(staticBody(nil) + "A101x"), brcode.ErrMalformed},
		{"wrong GUI", body(map[string]string{"26": tlv("00", "br.gov.bcb.pax") + tlv("01", "k")}), brcode.ErrMalformed},
		{"no GUI", body(map[string]string{"26": tlv("01", "k")}), brcode.ErrMalformed},
		{"GUI twice", body(map[string]string{"26": tlv("00", "br.gov.bcb.pix") + tlv("00", "br.gov.bcb.pix") + tlv("01", "k")}), brcode.ErrMalformed},
		{"neither key nor location", body(map[string]string{"26": tlv("00", "br.gov.bcb.pix")}), brcode.ErrMalformed},
		{"both key and location", body(map[string]string{"26": tlv("00", "br.gov.bcb.pix") + tlv("01", "k") + tlv("25", "pix.example.com/x")}), brcode.ErrMalformed},
		{"template 26 garbled", body(map[string]string{"26": "0014br.gov.bcb.pix01"}), brcode.ErrMalformed},
		{"amount not numeric", body(map[string]string{"54": "1O.00"}), brcode.ErrMalformed},
		{"amount with comma", body(map[string]string{"54": "10,00"}), brcode.ErrMalformed},
		{"amount negative", body(map[string]string{"54": "-1.00"}), brcode.ErrMalformed},
		{"amount with plus", body(map[string]string{"54": "+1.00"}), brcode.ErrMalformed},
		{"amount three decimals", body(map[string]string{"54": "1.005"}), brcode.ErrMalformed},
		{"amount trailing point", body(map[string]string{"54": "1."}), brcode.ErrMalformed},
		{"amount leading point", body(map[string]string{"54": ".5"}), brcode.ErrMalformed},
		{"amount exponent", body(map[string]string{"54": "1e3"}), brcode.ErrMalformed},
		{"amount zero", body(map[string]string{"54": "0.00"}), brcode.ErrMalformed},
		{"amount 14 characters", body(map[string]string{"54": "10000000000.00"}), brcode.ErrMalformed},
		{"amount 13 digits", body(map[string]string{"54": "9999999999999"}), brcode.ErrMalformed},
		{"currency USD", body(map[string]string{"53": "840"}), brcode.ErrMalformed},
		{"country PT", body(map[string]string{"58": "PT"}), brcode.ErrMalformed},
		{"payload format 02", body(map[string]string{"00": "02"}), brcode.ErrMalformed},
		{"point of initiation 13", seal("000201" + tlv("01", "13") + staticBody(map[string]string{"00": "-"})), brcode.ErrMalformed},
		{"00 not first", seal(staticBody(map[string]string{"00": "-"}) + "000201"), brcode.ErrMalformed},
		{"63 in the middle", seal(staticBody(nil) + "63041234"), brcode.ErrMalformed},
		{"name missing", body(map[string]string{"59": "-"}), brcode.ErrMalformed},
		{"city missing", body(map[string]string{"60": "-"}), brcode.ErrMalformed},
		{"template 26 missing", body(map[string]string{"26": "-"}), brcode.ErrMalformed},
		{"name of 26 characters", body(map[string]string{"59": strings.Repeat("N", 26)}), brcode.ErrMalformed},
		{"city of 16 characters", body(map[string]string{"60": strings.Repeat("C", 16)}), brcode.ErrMalformed},
		{"name with accent", body(map[string]string{"59": "JOSÉ"}), brcode.ErrMalformed},
		{"tag 59 twice", seal(staticBody(nil) + tlv("59", "X")), brcode.ErrMalformed},
		{"txid with dash", body(map[string]string{"62": tlv("05", "PED-1")}), brcode.ErrMalformed},
		{"template 62 without txid", body(map[string]string{"62": tlv("50", "x")}), brcode.ErrMalformed},
		{"invalid UTF-8", body(map[string]string{"26": tlv("00", "br.gov.bcb.pix") + tlv("01", "k\xff")}), brcode.ErrMalformed},
		{"control character", body(map[string]string{"26": tlv("00", "br.gov.bcb.pix") + tlv("01", "k\x00")}), brcode.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := brcode.Parse(tc.in)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Parse(%q) = %+v, %v; want %v", tc.in, b, err, tc.want)
			}
			if b != nil {
				t.Errorf("returned a code alongside the error: %+v", b)
			}
			other := brcode.ErrChecksum
			if tc.want == brcode.ErrChecksum {
				other = brcode.ErrMalformed
			}
			if errors.Is(err, other) {
				t.Errorf("error %v matches both sentinels", err)
			}
		})
	}
}

// Leniency that costs nothing: the checksum protects the payer whatever the
// case of its hex digits, and Pix codes in the wild use both.
func TestParseBRCodeAccepts(t *testing.T) {
	t.Parallel()
	vec := vectors(t)[0]
	for _, tc := range []struct{ name, in string }{
		{"lower-case CRC", vec[:len(vec)-4] + strings.ToLower(vec[len(vec)-4:])},
		{"upper-case GUI", seal(staticBody(map[string]string{"26": tlv("00", "BR.GOV.BCB.PIX") + tlv("01", "k")}))},
		{"template 62 absent", seal(staticBody(map[string]string{"62": "-"}))},
		{"tags out of canonical order", seal("000201" + tlv("59", "Loja") + staticBody(map[string]string{"00": "-", "59": "-"}))},
	} {
		if _, err := brcode.Parse(tc.in); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
