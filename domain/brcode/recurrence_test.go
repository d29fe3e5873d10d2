package brcode_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/quitapix/quita/domain/brcode"
)

// A recurrence's code alone (JORNADA_2) has template 26 with only the
// Pix GUI, template 80 with the recurrence's location, no amount, txid
// "***", and a CRC over all of it.
func TestNewRecurrence(t *testing.T) {
	t.Parallel()
	code, err := brcode.NewRecurrence("https://pay.example.com/rec/abc123", "Loja São João", "São Paulo")
	if err != nil {
		t.Fatal(err)
	}
	tlvs, err := brcode.SplitTLV(code)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range tlvs {
		got = append(got, x.Tag+"="+x.Value)
	}
	want := []string{"00=01", "26=0014br.gov.bcb.pix", "52=0000", "53=986", "58=BR", "59=Loja Sao Joao", "60=Sao Paulo",
		"62=0503***", "80=0014br.gov.bcb.pix2526pay.example.com/rec/abc123"}
	if strings.Join(got[:len(got)-1], " ") != strings.Join(want, " ") || tlvs[len(tlvs)-1].Tag != "63" {
		t.Fatalf("tlvs %v, want %v then 63", got, want)
	}
	if crc := fmt.Sprintf("%04X", brcode.CRC16CCITT([]byte(code[:len(code)-4]))); crc != code[len(code)-4:] {
		t.Errorf("CRC %s, code ends %s", crc, code[len(code)-4:])
	}
	if _, err := brcode.NewRecurrence("", "Loja", "SP"); !errors.Is(err, brcode.ErrMalformed) {
		t.Errorf("no location: %v", err)
	}
}

// The composite code (JORNADA_3) is the charge's code with template 80
// added before the CRC: it still parses, its charge is unchanged and the
// recurrence's location reads back.
func TestWithRecurrence(t *testing.T) {
	t.Parallel()
	cob, err := brcode.NewDynamic("pay.example.com/pix/cobtxid0001", "Loja", "Sao Paulo")
	if err != nil {
		t.Fatal(err)
	}
	code, err := brcode.WithRecurrence(cob, "pay.example.com/rec/r1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := brcode.Parse(code)
	if err != nil {
		t.Fatalf("the composite code does not parse: %v", err)
	}
	if loc, ok := brcode.RecurrenceLocation(b); !ok || loc != "pay.example.com/rec/r1" || b.Location != "pay.example.com/pix/cobtxid0001" {
		t.Errorf("recurrence %q %v, cob %q", loc, ok, b.Location)
	}
	if !strings.HasPrefix(code, cob[:len(cob)-8]) {
		t.Errorf("the charge's part changed:\n%s\n%s", cob, code)
	}
	if _, err := brcode.WithRecurrence(code, "pay.example.com/rec/r2"); !errors.Is(err, brcode.ErrMalformed) {
		t.Errorf("a second recurrence: %v", err)
	}
}
