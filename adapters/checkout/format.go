package checkout

import (
	"strconv"
	"strings"
)

// FormatAmount renders minor units as the payer reads money in lang:
// "R$ 1.234,56" in Portuguese, "R$ 1,234.56" in English. Integer
// arithmetic only; currencies other than BRL show their ISO code
// ("EUR 10,00"). Every currency is assumed to have two decimals, as on
// every surface of Quita.
func FormatAmount(minor int64, currency string, lang string) string {
	thousands, decimal := ".", ","
	if lang == LangEnglish {
		thousands, decimal = ",", "."
	}
	symbol := currency
	if currency == "" || currency == "BRL" {
		symbol = "R$"
	}
	neg := minor < 0
	// uint64 so that the most negative int64 negates without overflow.
	u := uint64(minor)
	if neg {
		u = -u
	}
	whole, cents := u/100, u%100
	digits := strconv.FormatUint(whole, 10)

	var b strings.Builder
	b.Grow(len(symbol) + len(digits) + len(digits)/3 + 5)
	if neg {
		b.WriteByte('-')
	}
	b.WriteString(symbol)
	b.WriteByte(' ')
	for i := range len(digits) {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteString(thousands)
		}
		b.WriteByte(digits[i])
	}
	b.WriteString(decimal)
	b.WriteByte(byte('0' + cents/10))
	b.WriteByte(byte('0' + cents%10))
	return b.String()
}
