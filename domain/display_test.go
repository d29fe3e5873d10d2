package domain_test

import (
	"errors"
	"testing"

	"github.com/quitapix/quita/domain"
)

func TestMaskTaxID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		kind     domain.TaxIDKind
	}{
		{"529.982.247-25", "***.982.247-**", domain.TaxIDCPF},
		{"52998224725", "***.982.247-**", domain.TaxIDCPF},
		{"11.222.333/0001-81", "**.222.333/0001-**", domain.TaxIDCNPJ},
		{"12abc34501de35", "**.ABC.345/01DE-**", domain.TaxIDCNPJ},
		{"", "", ""},
		{"12345", "*****", ""},
	}
	for _, tt := range tests {
		got, kind := domain.MaskTaxID(tt.in)
		if got != tt.want || kind != tt.kind {
			t.Errorf("MaskTaxID(%q) = %q, %q; want %q, %q", tt.in, got, kind, tt.want, tt.kind)
		}
	}
}

func TestParseLocale(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]domain.Locale{
		"": domain.LocalePtBR, "pt-BR": domain.LocalePtBR, "pt_br": domain.LocalePtBR, "PT": domain.LocalePtBR,
		"en": domain.LocaleEN, "en-US": domain.LocaleEN, "EN-gb": domain.LocaleEN,
	} {
		if got, err := domain.ParseLocale(in); err != nil || got != want {
			t.Errorf("ParseLocale(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"es", "fr-FR", "english", "pt-PT"} {
		var ve *domain.ValidationError
		if _, err := domain.ParseLocale(in); !errors.As(err, &ve) || ve.Field != domain.FieldLang {
			t.Errorf("ParseLocale(%q) error = %v, want a lang validation error", in, err)
		}
	}
}
