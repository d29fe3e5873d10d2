package domain_test

import (
	"math"
	"testing"

	"github.com/quitapix/quita/domain"
)

func TestFormatMoney(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		minor int64
		cur   domain.Currency
		en    bool
		want  string
	}{
		{123456, "BRL", false, "R$ 1.234,56"},
		{123456, "BRL", true, "R$ 1,234.56"},
		{5, "BRL", false, "R$ 0,05"},
		{0, "", false, "R$ 0,00"},
		{-100000000, "BRL", false, "-R$ 1.000.000,00"},
		{199, "EUR", false, "1,99 €"},
		{199, "USDT", true, "1.99 USDT"},
		{math.MinInt64, "BRL", false, "-R$ 92.233.720.368.547.758,08"},
	} {
		if got := domain.FormatMoney(tt.minor, tt.cur, tt.en); got != tt.want {
			t.Errorf("FormatMoney(%d, %q, en=%v) = %q, want %q", tt.minor, tt.cur, tt.en, got, tt.want)
		}
	}
}
