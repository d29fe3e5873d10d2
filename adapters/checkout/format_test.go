package checkout_test

import (
	"math"
	"testing"

	"github.com/quitapix/quita/adapters/checkout"
)

func TestFormatAmount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		minor    int64
		currency string
		lang     string
		want     string
	}{
		{0, "BRL", checkout.LangPortuguese, "R$ 0,00"},
		{1, "BRL", checkout.LangPortuguese, "R$ 0,01"},
		{99, "BRL", checkout.LangPortuguese, "R$ 0,99"},
		{100, "BRL", checkout.LangPortuguese, "R$ 1,00"},
		{123456, "BRL", checkout.LangPortuguese, "R$ 1.234,56"},
		{100000, "BRL", checkout.LangPortuguese, "R$ 1.000,00"},
		{99999999, "BRL", checkout.LangPortuguese, "R$ 999.999,99"},
		{10000000000000, "BRL", checkout.LangPortuguese, "R$ 100.000.000.000,00"},
		{123456, "BRL", checkout.LangEnglish, "R$ 1,234.56"},
		{5, "", checkout.LangEnglish, "R$ 0.05"},
		{-123456, "BRL", checkout.LangPortuguese, "-R$ 1.234,56"},
		{1050, "EUR", checkout.LangPortuguese, "10,50 €"},
		{123456, "EUR", checkout.LangPortuguese, "1.234,56 €"},
		{123456, "EUR", checkout.LangEnglish, "€1,234.56"},
		{-123456, "EUR", checkout.LangPortuguese, "-1.234,56 €"},
		{123456, "USD", checkout.LangPortuguese, "US$ 1.234,56"},
		{123456, "USD", checkout.LangEnglish, "$1,234.56"},
		{123456, "GBP", checkout.LangEnglish, "£1,234.56"},
		{123456, "USDT", checkout.LangPortuguese, "1.234,56 USDT"},
		{123456, "USDT", checkout.LangEnglish, "1,234.56 USDT"},
		{math.MaxInt64, "BRL", checkout.LangPortuguese, "R$ 92.233.720.368.547.758,07"},
		{math.MinInt64, "BRL", checkout.LangPortuguese, "-R$ 92.233.720.368.547.758,08"},
	}
	for _, tt := range tests {
		if got := checkout.FormatAmount(tt.minor, tt.currency, tt.lang); got != tt.want {
			t.Errorf("FormatAmount(%d, %q, %q) = %q, want %q", tt.minor, tt.currency, tt.lang, got, tt.want)
		}
	}
}

func TestNegotiateLanguage(t *testing.T) {
	t.Parallel()
	tests := []struct{ header, want string }{
		{"", checkout.LangPortuguese},
		{"pt-BR,pt;q=0.9,en;q=0.8", checkout.LangPortuguese},
		{"en-US,en;q=0.9", checkout.LangEnglish},
		{"EN", checkout.LangEnglish},
		{"en-GB;q=0.8, pt-BR;q=0.9", checkout.LangPortuguese},
		{"pt;q=0.5, en;q=0.6", checkout.LangEnglish},
		{"fr-FR,fr;q=0.9,en;q=0.5", checkout.LangEnglish},
		{"fr-FR,de", checkout.LangPortuguese},
		{"en;q=0, pt", checkout.LangPortuguese},
		{"en;q=bogus", checkout.LangPortuguese},
		{"*", checkout.LangPortuguese},
		{"english", checkout.LangPortuguese},
	}
	for _, tt := range tests {
		if got := checkout.NegotiateLanguage(tt.header); got != tt.want {
			t.Errorf("NegotiateLanguage(%q) = %q, want %q", tt.header, got, tt.want)
		}
	}
}
