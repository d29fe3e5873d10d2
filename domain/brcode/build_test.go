package brcode_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/quitapix/quita/domain/brcode"
)

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
		if got := brcode.CRC16CCITT([]byte(tc.in)); got != tc.want {
			t.Errorf("CRC16CCITT(%q) = %04X, want %04X", tc.in, got, tc.want)
		}
	}
}

// The table-driven checksum agrees with the polynomial run bit by bit, the
// way the EMV MPM specification states it, on every byte value in every
// position of the register.
func TestCRC16CCITTMatchesBitwise(t *testing.T) {
	t.Parallel()
	bitwise := func(data []byte) uint16 {
		crc := uint16(0xFFFF)
		for _, b := range data {
			crc ^= uint16(b) << 8
			for range 8 {
				if crc&0x8000 != 0 {
					crc = crc<<1 ^ 0x1021
				} else {
					crc <<= 1
				}
			}
		}
		return crc
	}
	data := make([]byte, 0, 3*256)
	for i := range 256 {
		data = append(data, byte(i), byte(255-i), byte(i*7))
	}
	for n := range len(data) + 1 {
		if got, want := brcode.CRC16CCITT(data[:n]), bitwise(data[:n]); got != want {
			t.Fatalf("CRC16CCITT of the first %d bytes = %04X, want %04X", n, got, want)
		}
	}
}

// Every golden vector must survive a parse and a re-encode byte for byte:
// these are codes other Pix implementations emit and payer apps accept.
func TestBRCodeVectorsRoundTrip(t *testing.T) {
	t.Parallel()
	for i, v := range vectors(t) {
		t.Run(fmt.Sprint("vector", i+1), func(t *testing.T) {
			t.Parallel()
			b, err := brcode.Parse(v)
			if err != nil {
				t.Fatalf("Parse: %v", err)
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
	v := vectors(t)

	static, err := brcode.Parse(v[2])
	if err != nil {
		t.Fatal(err)
	}
	want := &brcode.Code{
		Key:                  "123e4567-e12b-12d1-a456-426655440000",
		MerchantCategoryCode: "0000",
		Amount:               10050,
		MerchantName:         "Fulano de Tal",
		MerchantCity:         "BRASILIA",
		Extra: []brcode.TLV{{
			Tag:   "80",
			Value: "0014br.gov.bcb.pix2552pix.example.com/rec/2353c790eefb11eaadc10242ac120002",
		}},
	}
	if !reflect.DeepEqual(static, want) {
		t.Errorf("vector 3:\n got %+v\nwant %+v", static, want)
	}

	dynamic, err := brcode.Parse(v[1])
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
	v := vectors(t)
	for _, tc := range []struct {
		name                  string
		location, merch, city string
		want                  string
	}{
		{"vector 2, scheme stripped", "https://pix.example.com/8b3da2f39a4140d1a91abd93113bd441", "Fulano de Tal", "BRASILIA", v[1]},
		{"vector 5, no scheme", "payload.psp.com/3ec9d2f9-5f03-4e0e-820d-63a81e769e87", "THALES OGLIARI", "SAO MIGUEL DO O", v[4]},
		{"vector 5, upper-case scheme", "HTTPS://payload.psp.com/3ec9d2f9-5f03-4e0e-820d-63a81e769e87", "THALES OGLIARI", "SAO MIGUEL DO O", v[4]},
	} {
		got, err := brcode.NewDynamic(tc.location, tc.merch, tc.city)
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
	v := vectors(t)
	got, err := brcode.NewStatic("123e4567-e12b-12d1-a456-426655440000", "", 0, "Fulano de Tal", "BRASILIA", "")
	if err != nil || got != v[0] {
		t.Errorf("vector 1:\n got %s (%v)\nwant %s", got, err, v[0])
	}
	got, err = brcode.NewStatic("thalesog@me.com", "Pedido 123", 1000, "THALES OGLIARI", "SAO MIGUEL DO O", "")
	if err != nil || got != v[3] {
		t.Errorf("vector 4:\n got %s (%v)\nwant %s", got, err, v[3])
	}
}

func TestNewStaticBRCodeTxID(t *testing.T) {
	t.Parallel()
	s, err := brcode.NewStatic("+5561999999999", "", 1, "Loja", "Recife", "PEDIDO42")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s, "62120508PEDIDO42") {
		t.Errorf("txid not in tag 62: %s", s)
	}
	b, err := brcode.Parse(s)
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
		"dynamic without location": errOf(brcode.NewDynamic("https://", "Loja", "Recife")),
		"dynamic other scheme":     errOf(brcode.NewDynamic("ftp://pix.example.com/x", "Loja", "Recife")),
		"dynamic without name":     errOf(brcode.NewDynamic("pix.example.com/x", "", "Recife")),
		"dynamic without city":     errOf(brcode.NewDynamic("pix.example.com/x", "Loja", "")),
		"static without key":       errOf(brcode.NewStatic("", "", 0, "Loja", "Recife", "")),
		"static negative amount":   errOf(brcode.NewStatic("k", "", -1, "Loja", "Recife", "")),
		"static amount too large":  errOf(brcode.NewStatic("k", "", 1_000_000_000_000, "Loja", "Recife", "")),
		"static txid with dash":    errOf(brcode.NewStatic("k", "", 0, "Loja", "Recife", "PED-1")),
		"static txid too long":     errOf(brcode.NewStatic("k", "", 0, "Loja", "Recife", strings.Repeat("a", 26))),
		"static info too long":     errOf(brcode.NewStatic("k", strings.Repeat("i", 80), 0, "Loja", "Recife", "")),
		"static key control char":  errOf(brcode.NewStatic("k\n", "", 0, "Loja", "Recife", "")),
	} {
		if !errors.Is(err, brcode.ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed", name, err)
		}
	}
}

func errOf(_ string, err error) error { return err }
