package domain_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/golden"
)

// The vectors are shared with the SDKs; the payer lock depends on Quita and
// every SDK agreeing on which ids are valid.
func TestTaxIDVectors(t *testing.T) {
	t.Parallel()
	for _, line := range golden.Lines(t, "tax-id-vectors.txt") {
		f := strings.Fields(line)
		if len(f) != 3 || (f[2] != "valid" && f[2] != "invalid") {
			t.Fatalf("bad vector line %q", line)
		}
		kind, value, valid := domain.TaxIDKind(f[0]), f[1], f[2] == "valid"
		t.Run(line, func(t *testing.T) {
			t.Parallel()
			var got bool
			switch kind {
			case domain.TaxIDCPF:
				got = domain.ValidCPF(value)
				if domain.ValidCNPJ(value) {
					t.Errorf("ValidCNPJ(%q) = true for a CPF vector", value)
				}
			case domain.TaxIDCNPJ:
				got = domain.ValidCNPJ(value)
				if domain.ValidCPF(value) {
					t.Errorf("ValidCPF(%q) = true for a CNPJ vector", value)
				}
			default:
				t.Fatalf("unknown kind %q", kind)
			}
			if got != valid {
				t.Errorf("Valid%s(%q) = %v, want %v", strings.ToUpper(string(kind)), value, got, valid)
			}

			id, err := domain.ParseTaxID(value)
			if !valid {
				if !errors.Is(err, domain.ErrTaxIDInvalid) {
					t.Errorf("ParseTaxID(%q) = %+v, %v; want ErrTaxIDInvalid", value, id, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTaxID(%q): %v", value, err)
			}
			if id.Kind != kind || id.Value != domain.NormalizeTaxID(value) {
				t.Errorf("ParseTaxID(%q) = %+v, want kind %s value %s", value, id, kind, domain.NormalizeTaxID(value))
			}
		})
	}
}

func TestNormalizeTaxID(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"111.444.777-35":      "11144477735",
		" 12.abc.345/01de-35": "12ABC34501DE35",
		"529 982 247 25\t":    "52998224725",
		"":                    "",
		"x":                   "X",
	} {
		if got := domain.NormalizeTaxID(in); got != want {
			t.Errorf("NormalizeTaxID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseTaxIDRejects(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"",
		"5299822472",      // 10 digits
		"529982247250",    // 12 digits
		"5299822472A",     // letter in a CPF
		"1144477700016A",  // letter in a CNPJ check digit
		"11.444.777/0001", // CNPJ without check digits
		"AAAAAAAAAAAAAA",
		"１１１４４４７７７３５", // full-width digits
	} {
		if id, err := domain.ParseTaxID(in); !errors.Is(err, domain.ErrTaxIDInvalid) {
			t.Errorf("ParseTaxID(%q) = %+v, %v; want ErrTaxIDInvalid", in, id, err)
		} else if strings.Contains(err.Error(), domain.NormalizeTaxID(in)) && in != "" {
			t.Errorf("error %q repeats the tax id", err)
		}
	}
}

func TestParseTaxIDLowerCaseCNPJ(t *testing.T) {
	t.Parallel()
	id, err := domain.ParseTaxID("12.abc.345/01de-35")
	if err != nil || id != (domain.TaxID{Kind: domain.TaxIDCNPJ, Value: "12ABC34501DE35"}) {
		t.Errorf("got %+v, %v", id, err)
	}
}

func TestTaxIDMasked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		id   domain.TaxID
		want string
	}{
		{domain.TaxID{Kind: domain.TaxIDCPF, Value: "52998224725"}, "*********25"},
		{domain.TaxID{Kind: domain.TaxIDCNPJ, Value: "12ABC34501DE35"}, "************35"},
		{domain.TaxID{Value: "7"}, "*"},
		{domain.TaxID{}, ""},
	} {
		if got := tc.id.Masked(); got != tc.want {
			t.Errorf("%+v.Masked() = %q, want %q", tc.id, got, tc.want)
		}
	}
}

// FuzzTaxID checks that validation is a property of the normalised id, so
// two spellings of one id can never disagree, and that ParseTaxID agrees
// with the Valid functions.
func FuzzTaxID(f *testing.F) {
	for _, line := range golden.Lines(f, "tax-id-vectors.txt") {
		if fs := strings.Fields(line); len(fs) == 3 {
			f.Add(fs[1])
			f.Add(strings.ToLower(fs[1]))
		}
	}
	f.Add("")
	f.Add("\xff11144477735")
	f.Fuzz(func(t *testing.T, s string) {
		n := domain.NormalizeTaxID(s)
		if domain.NormalizeTaxID(n) != n {
			t.Fatalf("NormalizeTaxID is not idempotent on %q", s)
		}
		cpf, cnpj := domain.ValidCPF(s), domain.ValidCNPJ(s)
		if cpf != domain.ValidCPF(n) || cnpj != domain.ValidCNPJ(n) {
			t.Fatalf("%q and its normal form %q disagree", s, n)
		}
		if cpf && cnpj {
			t.Fatalf("%q is both a CPF and a CNPJ", s)
		}
		id, err := domain.ParseTaxID(s)
		switch {
		case cpf:
			if err != nil || id.Kind != domain.TaxIDCPF || id.Value != n {
				t.Fatalf("ParseTaxID(%q) = %+v, %v; ValidCPF says true", s, id, err)
			}
		case cnpj:
			if err != nil || id.Kind != domain.TaxIDCNPJ || id.Value != n {
				t.Fatalf("ParseTaxID(%q) = %+v, %v; ValidCNPJ says true", s, id, err)
			}
		default:
			if !errors.Is(err, domain.ErrTaxIDInvalid) {
				t.Fatalf("ParseTaxID(%q) = %+v, %v; both Valid functions say false", s, id, err)
			}
		}
	})
}
