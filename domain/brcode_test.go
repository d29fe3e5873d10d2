package domain_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/quitapix/quita/domain"
)

// brcodeTestdata reads a golden file shared with the SDKs. The shared tree is
// the source of truth while it exists; the repository keeps a copy so the
// tests still run in a clone that has only the module.
func brcodeTestdata(tb testing.TB, name string) []byte {
	tb.Helper()
	for _, dir := range []string{"../../shared/testdata", "../testdata"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil {
			return b
		}
		if !errors.Is(err, os.ErrNotExist) {
			tb.Fatalf("read %s: %v", name, err)
		}
	}
	tb.Fatalf("golden file %s found neither in ../../shared/testdata nor ../testdata", name)
	return nil
}

// brcodeTestdataLines returns the non-blank, non-comment lines of a golden file.
func brcodeTestdataLines(tb testing.TB, name string) []string {
	tb.Helper()
	var out []string
	for _, line := range strings.Split(string(brcodeTestdata(tb, name)), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, line)
	}
	if len(out) == 0 {
		tb.Fatalf("golden file %s has no vectors", name)
	}
	return out
}

func brcodeVectors(tb testing.TB) []string {
	tb.Helper()
	v := brcodeTestdataLines(tb, "brcode-vectors.txt")
	if len(v) < 5 {
		tb.Fatalf("brcode-vectors.txt has %d vectors, the tests below need 5", len(v))
	}
	return v
}

// brcodeTLV writes one data object, for building hand-made payloads.
func brcodeTLV(tag, v string) string { return fmt.Sprintf("%s%02d%s", tag, len(v), v) }

// brcodeSeal appends a correct tag 63, so a test can break exactly one rule
// without also breaking the checksum.
func brcodeSeal(payload string) string {
	payload += "6304"
	return payload + fmt.Sprintf("%04X", domain.CRC16CCITT([]byte(payload)))
}

// brcodeStaticBody is a valid static code without its CRC, for cases that
// change one tag.
func brcodeStaticBody(replace map[string]string) string {
	tags := []struct{ tag, v string }{
		{"00", "01"},
		{"26", brcodeTLV("00", "br.gov.bcb.pix") + brcodeTLV("01", "thalesog@me.com")},
		{"52", "0000"},
		{"53", "986"},
		{"54", "10.00"},
		{"58", "BR"},
		{"59", "THALES OGLIARI"},
		{"60", "SAO PAULO"},
		{"62", brcodeTLV("05", "***")},
	}
	var b strings.Builder
	for _, t := range tags {
		v, ok := replace[t.tag]
		if !ok {
			v = t.v
		}
		if v == "-" { // drop the tag
			continue
		}
		b.WriteString(brcodeTLV(t.tag, v))
	}
	return b.String()
}

func TestCRC16CCITT(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want uint16
	}{
		{"123456789", 0x29B1}, // the CRC-16/CCITT-FALSE check value
		{"", 0xFFFF},          // the initial value, untouched
		{"A", 0xB915},
	} {
		if got := domain.CRC16CCITT([]byte(tc.in)); got != tc.want {
			t.Errorf("CRC16CCITT(%q) = %04X, want %04X", tc.in, got, tc.want)
		}
	}
}

// Every golden vector must survive a parse and a re-encode byte for byte:
// these are codes other Pix implementations emit and payer apps accept.
func TestBRCodeVectorsRoundTrip(t *testing.T) {
	t.Parallel()
	for i, v := range brcodeVectors(t) {
		t.Run(fmt.Sprint("vector", i+1), func(t *testing.T) {
			t.Parallel()
			b, err := domain.ParseBRCode(v)
			if err != nil {
				t.Fatalf("ParseBRCode: %v", err)
			}
			got, err := b.Encode()
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if got != v {
				t.Errorf("re-encoded\n got %s\nwant %s", got, v)
			}
		})
	}
}

func TestParseBRCodeVectorFields(t *testing.T) {
	t.Parallel()
	v := brcodeVectors(t)

	static, err := domain.ParseBRCode(v[2])
	if err != nil {
		t.Fatal(err)
	}
	want := &domain.BRCode{
		Key:                  "123e4567-e12b-12d1-a456-426655440000",
		MerchantCategoryCode: "0000",
		Amount:               10050,
		MerchantName:         "Fulano de Tal",
		MerchantCity:         "BRASILIA",
		Extra: []domain.TLV{{
			Tag:   "80",
			Value: "0014br.gov.bcb.pix2552pix.example.com/rec/2353c790eefb11eaadc10242ac120002",
		}},
	}
	if !reflect.DeepEqual(static, want) {
		t.Errorf("vector 3:\n got %+v\nwant %+v", static, want)
	}

	dynamic, err := domain.ParseBRCode(v[1])
	if err != nil {
		t.Fatal(err)
	}
	if dynamic.PointOfInitiation != "12" || dynamic.Location != "pix.example.com/8b3da2f39a4140d1a91abd93113bd441" ||
		dynamic.Key != "" || dynamic.Amount != 0 || dynamic.TxID != "" {
		t.Errorf("vector 2: %+v", dynamic)
	}
}

func TestNewDynamicBRCodeReproducesVectors(t *testing.T) {
	t.Parallel()
	v := brcodeVectors(t)
	for _, tc := range []struct {
		name                  string
		location, merch, city string
		want                  string
	}{
		{"vector 2, scheme stripped", "https://pix.example.com/8b3da2f39a4140d1a91abd93113bd441", "Fulano de Tal", "BRASILIA", v[1]},
		{"vector 5, no scheme", "payload.psp.com/3ec9d2f9-5f03-4e0e-820d-63a81e769e87", "THALES OGLIARI", "SAO MIGUEL DO O", v[4]},
		{"vector 5, upper-case scheme", "HTTPS://payload.psp.com/3ec9d2f9-5f03-4e0e-820d-63a81e769e87", "THALES OGLIARI", "SAO MIGUEL DO O", v[4]},
	} {
		got, err := domain.NewDynamicBRCode(tc.location, tc.merch, tc.city)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

func TestNewStaticBRCodeReproducesVectors(t *testing.T) {
	t.Parallel()
	v := brcodeVectors(t)
	got, err := domain.NewStaticBRCode("123e4567-e12b-12d1-a456-426655440000", "", 0, "Fulano de Tal", "BRASILIA", "")
	if err != nil || got != v[0] {
		t.Errorf("vector 1:\n got %s (%v)\nwant %s", got, err, v[0])
	}
	got, err = domain.NewStaticBRCode("thalesog@me.com", "Pedido 123", 1000, "THALES OGLIARI", "SAO MIGUEL DO O", "")
	if err != nil || got != v[3] {
		t.Errorf("vector 4:\n got %s (%v)\nwant %s", got, err, v[3])
	}
}

func TestNewStaticBRCodeTxID(t *testing.T) {
	t.Parallel()
	s, err := domain.NewStaticBRCode("+5561999999999", "", 1, "Loja", "Recife", "PEDIDO42")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s, "62120508PEDIDO42") {
		t.Errorf("txid not in tag 62: %s", s)
	}
	b, err := domain.ParseBRCode(s)
	if err != nil {
		t.Fatal(err)
	}
	if b.TxID != "PEDIDO42" || b.Amount != 1 {
		t.Errorf("parsed %+v", b)
	}
}

func TestBuildersRejectBadInput(t *testing.T) {
	t.Parallel()
	for name, err := range map[string]error{
		"dynamic without location": brcodeErr(domain.NewDynamicBRCode("https://", "Loja", "Recife")),
		"dynamic other scheme":     brcodeErr(domain.NewDynamicBRCode("ftp://pix.example.com/x", "Loja", "Recife")),
		"dynamic without name":     brcodeErr(domain.NewDynamicBRCode("pix.example.com/x", "", "Recife")),
		"dynamic without city":     brcodeErr(domain.NewDynamicBRCode("pix.example.com/x", "Loja", "")),
		"static without key":       brcodeErr(domain.NewStaticBRCode("", "", 0, "Loja", "Recife", "")),
		"static negative amount":   brcodeErr(domain.NewStaticBRCode("k", "", -1, "Loja", "Recife", "")),
		"static amount too large":  brcodeErr(domain.NewStaticBRCode("k", "", 1_000_000_000_000, "Loja", "Recife", "")),
		"static txid with dash":    brcodeErr(domain.NewStaticBRCode("k", "", 0, "Loja", "Recife", "PED-1")),
		"static txid too long":     brcodeErr(domain.NewStaticBRCode("k", "", 0, "Loja", "Recife", strings.Repeat("a", 26))),
		"static info too long":     brcodeErr(domain.NewStaticBRCode("k", strings.Repeat("i", 80), 0, "Loja", "Recife", "")),
		"static key control char":  brcodeErr(domain.NewStaticBRCode("k\n", "", 0, "Loja", "Recife", "")),
	} {
		if !errors.Is(err, domain.ErrBRCodeMalformed) {
			t.Errorf("%s: err = %v, want ErrBRCodeMalformed", name, err)
		}
	}
}

func brcodeErr(_ string, err error) error { return err }

// Names and cities come from merchants' sign-up forms; payer apps want
// short ASCII, so Encode adapts rather than rejects.
func TestEncodeNormalisesNameAndCity(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, city         string
		wantName, wantCity string
	}{
		{"Açaí da Conceição Ltda Filial Centro", "São João del-Rei", "Acai da Conceicao Ltda Fi", "Sao Joao del-Re"},
		{"JOSÉ ÂNGELO", "BRASÍLIA", "JOSE ANGELO", "BRASILIA"},
		{"Jose\u0301 \u2605 Loja", "Macei\u00f3", "Jose  Loja", "Maceio"}, // combining accent and a star dropped
		{"exactly twenty-five char", "exactly fifteen", "exactly twenty-five char", "exactly fifteen"},
	} {
		s, err := domain.NewDynamicBRCode("pix.example.com/x", tc.name, tc.city)
		if err != nil {
			t.Errorf("%q/%q: %v", tc.name, tc.city, err)
			continue
		}
		b, err := domain.ParseBRCode(s)
		if err != nil {
			t.Errorf("%q/%q: re-parse: %v", tc.name, tc.city, err)
			continue
		}
		if b.MerchantName != tc.wantName || b.MerchantCity != tc.wantCity {
			t.Errorf("%q/%q encoded as %q/%q, want %q/%q", tc.name, tc.city, b.MerchantName, b.MerchantCity, tc.wantName, tc.wantCity)
		}
	}
	if _, err := domain.NewDynamicBRCode("pix.example.com/x", "北京", "Recife"); !errors.Is(err, domain.ErrBRCodeMalformed) {
		t.Errorf("name with nothing left after normalisation: err = %v", err)
	}
}

func TestEncodeRejectsInvalidFields(t *testing.T) {
	t.Parallel()
	ok := func() domain.BRCode {
		return domain.BRCode{Key: "k", MerchantName: "Loja", MerchantCity: "Recife"}
	}
	for _, tc := range []struct {
		name   string
		mutate func(*domain.BRCode)
	}{
		{"neither key nor location", func(b *domain.BRCode) { b.Key = "" }},
		{"both key and location", func(b *domain.BRCode) { b.Location = "pix.example.com/x" }},
		{"location with scheme", func(b *domain.BRCode) { b.Key, b.Location = "", "https://pix.example.com/x" }},
		{"point of initiation 13", func(b *domain.BRCode) { b.PointOfInitiation = "13" }},
		{"merchant category not digits", func(b *domain.BRCode) { b.MerchantCategoryCode = "00A0" }},
		{"extra repeats a modelled tag", func(b *domain.BRCode) { b.Extra = []domain.TLV{{Tag: "59", Value: "x"}} }},
		{"extra tag one digit", func(b *domain.BRCode) { b.Extra = []domain.TLV{{Tag: "8", Value: "x"}} }},
		{"extra empty value", func(b *domain.BRCode) { b.Extra = []domain.TLV{{Tag: "80", Value: ""}} }},
		{"extra value of 100 bytes", func(b *domain.BRCode) { b.Extra = []domain.TLV{{Tag: "80", Value: strings.Repeat("x", 100)}} }},
		{"account extra repeats GUI", func(b *domain.BRCode) { b.AccountExtra = []domain.TLV{{Tag: "00", Value: "x"}} }},
		{"additional data repeats txid", func(b *domain.BRCode) { b.AdditionalDataExtra = []domain.TLV{{Tag: "05", Value: "x"}} }},
		{"key of 90 bytes overflows tag 26", func(b *domain.BRCode) { b.Key = strings.Repeat("k", 90) }},
	} {
		b := ok()
		tc.mutate(&b)
		if _, err := b.Encode(); !errors.Is(err, domain.ErrBRCodeMalformed) {
			t.Errorf("%s: err = %v, want ErrBRCodeMalformed", tc.name, err)
		}
	}
	var nilCode *domain.BRCode
	if _, err := nilCode.Encode(); !errors.Is(err, domain.ErrBRCodeMalformed) {
		t.Errorf("nil receiver: err = %v", err)
	}
	b := ok()
	if _, err := b.Encode(); err != nil {
		t.Errorf("baseline: %v", err)
	}
}

// Fields Quita does not model must come back out, or re-issuing a code read
// from a partner would drop their data.
func TestBRCodePreservesUnknownTags(t *testing.T) {
	t.Parallel()
	in := &domain.BRCode{
		PointOfInitiation:    "11",
		Key:                  "thalesog@me.com",
		Info:                 "Pedido 123",
		AccountExtra:         []domain.TLV{{Tag: "03", Value: "FSS"}},
		MerchantCategoryCode: "5812",
		Amount:               1,
		MerchantName:         "Loja",
		MerchantCity:         "Recife",
		TxID:                 "ABC123",
		AdditionalDataExtra:  []domain.TLV{{Tag: "50", Value: "0014br.gov.bcb.brcode0105" + "1.0.0"}},
		Extra:                []domain.TLV{{Tag: "61", Value: "50000000"}, {Tag: "80", Value: "x"}, {Tag: "27", Value: "y"}},
	}
	s, err := in.Encode()
	if err != nil {
		t.Fatal(err)
	}
	out, err := domain.ParseBRCode(s)
	if err != nil {
		t.Fatalf("ParseBRCode(%s): %v", s, err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip:\n got %+v\nwant %+v", out, in)
	}
}

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
		b, err := domain.ParseBRCode(brcodeSeal(brcodeStaticBody(map[string]string{"54": tc.in})))
		if err != nil {
			t.Errorf("amount %q: %v", tc.in, err)
			continue
		}
		if b.Amount != tc.want {
			t.Errorf("amount %q = %d centavos, want %d", tc.in, b.Amount, tc.want)
		}
	}
	b, err := domain.ParseBRCode(brcodeSeal(brcodeStaticBody(map[string]string{"54": "-"})))
	if err != nil || b.Amount != 0 {
		t.Errorf("absent amount: %+v, %v", b, err)
	}
}

func TestParseBRCodeRejects(t *testing.T) {
	t.Parallel()
	vec := brcodeVectors(t)[0]
	body := func(replace map[string]string) string { return brcodeSeal(brcodeStaticBody(replace)) }
	for _, tc := range []struct {
		name string
		in   string
		want error
	}{
		{"empty", "", domain.ErrBRCodeMalformed},
		{"bad CRC", vec[:len(vec)-1] + "E", domain.ErrBRCodeChecksum},
		{"content altered, CRC kept", strings.Replace(vec, "Fulano", "Fulana", 1), domain.ErrBRCodeChecksum},
		{"CRC not hex", vec[:len(vec)-4] + "1G3D", domain.ErrBRCodeMalformed},
		{"truncated in the CRC", vec[:len(vec)-2], domain.ErrBRCodeMalformed},
		{"truncated in the middle", vec[:40], domain.ErrBRCodeMalformed},
		{"trailing newline", vec + "\n", domain.ErrBRCodeMalformed},
		{"no CRC tag", brcodeStaticBody(nil), domain.ErrBRCodeMalformed},
		{"length not digits", brcodeSeal(strings.Replace(brcodeStaticBody(nil), "5802BR", "58x2BR", 1)), domain.ErrBRCodeMalformed},
		{"length too short", brcodeSeal(strings.Replace(brcodeStaticBody(nil), "5802BR", "5801BR", 1)), domain.ErrBRCodeMalformed},
		{"length past the end", brcodeSeal(brcodeStaticBody(nil) + "8099x"), domain.ErrBRCodeMalformed},
		{"zero length", brcodeSeal(brcodeStaticBody(nil) + "8000"), domain.ErrBRCodeMalformed},
		{"tag not digits", brcodeSeal(brcodeStaticBody(nil) + "A101x"), domain.ErrBRCodeMalformed},
		{"wrong GUI", body(map[string]string{"26": brcodeTLV("00", "br.gov.bcb.pax") + brcodeTLV("01", "k")}), domain.ErrBRCodeMalformed},
		{"no GUI", body(map[string]string{"26": brcodeTLV("01", "k")}), domain.ErrBRCodeMalformed},
		{"GUI twice", body(map[string]string{"26": brcodeTLV("00", "br.gov.bcb.pix") + brcodeTLV("00", "br.gov.bcb.pix") + brcodeTLV("01", "k")}), domain.ErrBRCodeMalformed},
		{"neither key nor location", body(map[string]string{"26": brcodeTLV("00", "br.gov.bcb.pix")}), domain.ErrBRCodeMalformed},
		{"both key and location", body(map[string]string{"26": brcodeTLV("00", "br.gov.bcb.pix") + brcodeTLV("01", "k") + brcodeTLV("25", "pix.example.com/x")}), domain.ErrBRCodeMalformed},
		{"template 26 garbled", body(map[string]string{"26": "0014br.gov.bcb.pix01"}), domain.ErrBRCodeMalformed},
		{"amount not numeric", body(map[string]string{"54": "1O.00"}), domain.ErrBRCodeMalformed},
		{"amount with comma", body(map[string]string{"54": "10,00"}), domain.ErrBRCodeMalformed},
		{"amount negative", body(map[string]string{"54": "-1.00"}), domain.ErrBRCodeMalformed},
		{"amount with plus", body(map[string]string{"54": "+1.00"}), domain.ErrBRCodeMalformed},
		{"amount three decimals", body(map[string]string{"54": "1.005"}), domain.ErrBRCodeMalformed},
		{"amount trailing point", body(map[string]string{"54": "1."}), domain.ErrBRCodeMalformed},
		{"amount leading point", body(map[string]string{"54": ".5"}), domain.ErrBRCodeMalformed},
		{"amount exponent", body(map[string]string{"54": "1e3"}), domain.ErrBRCodeMalformed},
		{"amount zero", body(map[string]string{"54": "0.00"}), domain.ErrBRCodeMalformed},
		{"amount 14 characters", body(map[string]string{"54": "10000000000.00"}), domain.ErrBRCodeMalformed},
		{"amount 13 digits", body(map[string]string{"54": "9999999999999"}), domain.ErrBRCodeMalformed},
		{"currency USD", body(map[string]string{"53": "840"}), domain.ErrBRCodeMalformed},
		{"country PT", body(map[string]string{"58": "PT"}), domain.ErrBRCodeMalformed},
		{"payload format 02", body(map[string]string{"00": "02"}), domain.ErrBRCodeMalformed},
		{"point of initiation 13", brcodeSeal("000201" + brcodeTLV("01", "13") + brcodeStaticBody(map[string]string{"00": "-"})), domain.ErrBRCodeMalformed},
		{"00 not first", brcodeSeal(brcodeStaticBody(map[string]string{"00": "-"}) + "000201"), domain.ErrBRCodeMalformed},
		{"63 in the middle", brcodeSeal(brcodeStaticBody(nil) + "63041234"), domain.ErrBRCodeMalformed},
		{"name missing", body(map[string]string{"59": "-"}), domain.ErrBRCodeMalformed},
		{"city missing", body(map[string]string{"60": "-"}), domain.ErrBRCodeMalformed},
		{"template 26 missing", body(map[string]string{"26": "-"}), domain.ErrBRCodeMalformed},
		{"name of 26 characters", body(map[string]string{"59": strings.Repeat("N", 26)}), domain.ErrBRCodeMalformed},
		{"city of 16 characters", body(map[string]string{"60": strings.Repeat("C", 16)}), domain.ErrBRCodeMalformed},
		{"name with accent", body(map[string]string{"59": "JOSÉ"}), domain.ErrBRCodeMalformed},
		{"tag 59 twice", brcodeSeal(brcodeStaticBody(nil) + brcodeTLV("59", "X")), domain.ErrBRCodeMalformed},
		{"txid with dash", body(map[string]string{"62": brcodeTLV("05", "PED-1")}), domain.ErrBRCodeMalformed},
		{"template 62 without txid", body(map[string]string{"62": brcodeTLV("50", "x")}), domain.ErrBRCodeMalformed},
		{"invalid UTF-8", body(map[string]string{"26": brcodeTLV("00", "br.gov.bcb.pix") + brcodeTLV("01", "k\xff")}), domain.ErrBRCodeMalformed},
		{"control character", body(map[string]string{"26": brcodeTLV("00", "br.gov.bcb.pix") + brcodeTLV("01", "k\x00")}), domain.ErrBRCodeMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := domain.ParseBRCode(tc.in)
			if !errors.Is(err, tc.want) {
				t.Fatalf("ParseBRCode(%q) = %+v, %v; want %v", tc.in, b, err, tc.want)
			}
			if b != nil {
				t.Errorf("returned a code alongside the error: %+v", b)
			}
			other := domain.ErrBRCodeChecksum
			if tc.want == domain.ErrBRCodeChecksum {
				other = domain.ErrBRCodeMalformed
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
	vec := brcodeVectors(t)[0]
	for _, tc := range []struct{ name, in string }{
		{"lower-case CRC", vec[:len(vec)-4] + strings.ToLower(vec[len(vec)-4:])},
		{"upper-case GUI", brcodeSeal(brcodeStaticBody(map[string]string{"26": brcodeTLV("00", "BR.GOV.BCB.PIX") + brcodeTLV("01", "k")}))},
		{"template 62 absent", brcodeSeal(brcodeStaticBody(map[string]string{"62": "-"}))},
		{"tags out of canonical order", brcodeSeal("000201" + brcodeTLV("59", "Loja") + brcodeStaticBody(map[string]string{"00": "-", "59": "-"}))},
	} {
		if _, err := domain.ParseBRCode(tc.in); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
