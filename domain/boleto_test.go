package domain_test

import (
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

func digits(s string) string { return strings.NewReplacer(".", "", " ", "").Replace(s) }

func TestBoletoCheckDigits(t *testing.T) {
	t.Parallel()
	// Published examples (Bradesco, Banco do Brasil).
	valid := []string{
		"23793.38128 60007.827136 95000.063305 9 75520000370000",
		"00190.50095 40144.816069 06809.350314 3 37370000000100",
	}
	for _, l := range valid {
		d := digits(l)
		if !domain.ValidBoletoLine(d) {
			t.Errorf("%s: valid line rejected", l)
		}
		if !domain.ValidBoletoBarcode(domain.BoletoLineToBarcode(d)) {
			t.Errorf("%s: barcode rejected", l)
		}
		for i := range d {
			bad := []byte(d)
			bad[i] = '0' + (bad[i]-'0'+1)%10
			if domain.ValidBoletoLine(string(bad)) {
				t.Errorf("%s: change at %d not detected", l, i)
			}
		}
	}
	// NewBoleto rebuilds the Bradesco example from its parts.
	due := time.Date(1997, 10, 7, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 7552)
	b, err := domain.NewBoleto("237", 370000, due, "3381260007827139500006330")
	if err != nil {
		t.Fatal(err)
	}
	if b.Line != digits(valid[0]) || b.Barcode != "23799755200003700003381260007827139500006330" {
		t.Errorf("NewBoleto = %+v", b)
	}
	// The due factor wrapped to 1000 on 2025-02-22.
	if f := domain.BoletoDueFactor(time.Date(2025, 2, 22, 15, 0, 0, 0, time.UTC)); f != 1000 {
		t.Errorf("factor on 2025-02-22 = %d, want 1000", f)
	}
	if f := domain.BoletoDueFactor(time.Date(2025, 2, 21, 0, 0, 0, 0, time.UTC)); f != 9999 {
		t.Errorf("factor on 2025-02-21 = %d, want 9999", f)
	}
	if _, err := domain.NewBoleto("23", 1, due, "1"); err == nil {
		t.Error("NewBoleto accepted a bad bank and free field")
	}
	if domain.Mod10("0019050095") != 9 || domain.BoletoBarcodeDV("0019373700000001000500940144816060680935031") != 3 {
		t.Error("check digit functions disagree with the published example")
	}
}

func TestMultibancoReference(t *testing.T) {
	t.Parallel()
	ref, err := domain.MultibancoReference("21999", "1234567", 2500)
	if err != nil || len(ref) != 9 || !strings.HasPrefix(ref, "1234567") {
		t.Fatalf("ref %q %v", ref, err)
	}
	if !domain.ValidMultibancoReference("21999", ref, 2500) || domain.ValidMultibancoReference("21999", ref, 2501) {
		t.Error("check digits do not bind the amount")
	}
}
