package brcode_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/quitapix/quita/domain/brcode"
)

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
		s, err := brcode.NewDynamic("pix.example.com/x", tc.name, tc.city)
		if err != nil {
			t.Errorf("%q/%q: %v", tc.name, tc.city, err)
			continue
		}
		b, err := brcode.Parse(s)
		if err != nil {
			t.Errorf("%q/%q: re-parse: %v", tc.name, tc.city, err)
			continue
		}
		if b.MerchantName != tc.wantName || b.MerchantCity != tc.wantCity {
			t.Errorf("%q/%q encoded as %q/%q, want %q/%q", tc.name, tc.city, b.MerchantName, b.MerchantCity, tc.wantName, tc.wantCity)
		}
	}
	if _, err := brcode.NewDynamic("pix.example.com/x", "北京", "Recife"); !errors.Is(err, brcode.ErrMalformed) {
		t.Errorf("name with nothing left after normalisation: err = %v", err)
	}
}

func TestEncodeRejectsInvalidFields(t *testing.T) {
	t.Parallel()
	ok := func() brcode.Code {
		return brcode.Code{Key: "k", MerchantName: "Loja", MerchantCity: "Recife"}
	}
	for _, tc := range []struct {
		name   string
		mutate func(*brcode.Code)
	}{
		{"neither key nor location", func(b *brcode.Code) { b.Key = "" }},
		{"both key and location", func(b *brcode.Code) { b.Location = "pix.example.com/x" }},
		{"location with scheme", func(b *brcode.Code) { b.Key, b.Location = "", "https://pix.example.com/x" }},
		{"point of initiation 13", func(b *brcode.Code) { b.PointOfInitiation = "13" }},
		{"merchant category not digits", func(b *brcode.Code) { b.MerchantCategoryCode = "00A0" }},
		{"extra repeats a modelled tag", func(b *brcode.Code) { b.Extra = []brcode.TLV{{Tag: "59", Value: "x"}} }},
		{"extra tag one digit", func(b *brcode.Code) { b.Extra = []brcode.TLV{{Tag: "8", Value: "x"}} }},
		{"extra empty value", func(b *brcode.Code) { b.Extra = []brcode.TLV{{Tag: "80", Value: ""}} }},
		{"extra value of 100 bytes", func(b *brcode.Code) { b.Extra = []brcode.TLV{{Tag: "80", Value: strings.Repeat("x", 100)}} }},
		{"account extra repeats GUI", func(b *brcode.Code) { b.AccountExtra = []brcode.TLV{{Tag: "00", Value: "x"}} }},
		{"additional data repeats txid", func(b *brcode.Code) { b.AdditionalDataExtra = []brcode.TLV{{Tag: "05", Value: "x"}} }},
		{"key of 90 bytes overflows tag 26", func(b *brcode.Code) { b.Key = strings.Repeat("k", 90) }},
	} {
		b := ok()
		tc.mutate(&b)
		if _, err := b.Encode(); !errors.Is(err, brcode.ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed", tc.name, err)
		}
	}
	var nilCode *brcode.Code
	if _, err := nilCode.Encode(); !errors.Is(err, brcode.ErrMalformed) {
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
	in := &brcode.Code{
		PointOfInitiation:    "11",
		Key:                  "thalesog@me.com",
		Info:                 "Pedido 123",
		AccountExtra:         []brcode.TLV{{Tag: "03", Value: "FSS"}},
		MerchantCategoryCode: "5812",
		Amount:               1,
		MerchantName:         "Loja",
		MerchantCity:         "Recife",
		TxID:                 "ABC123",
		AdditionalDataExtra:  []brcode.TLV{{Tag: "50", Value: "0014br.gov.bcb.brcode0105" + "1.0.0"}},
		Extra:                []brcode.TLV{{Tag: "61", Value: "50000000"}, {Tag: "80", Value: "x"}, {Tag: "27", Value: "y"}},
	}
	s, err := in.Encode()
	if err != nil {
		t.Fatal(err)
	}
	out, err := brcode.Parse(s)
	if err != nil {
		t.Fatalf("Parse(%s): %v", s, err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip:\n got %+v\nwant %+v", out, in)
	}
}
