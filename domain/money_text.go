package domain

import (
	"strconv"
	"strings"
)

// FormatMoney renders minor units as people read money, in Brazilian
// Portuguese or (en) English, with integer arithmetic only. Every currency
// is assumed to have two decimals, as on every surface of Quita. The
// checkout page, the dashboard and receipts all print amounts with it.
//
//	BRL  R$ 1.234,56   (en: R$ 1,234.56)
//	EUR  1.234,56 €    (en: €1,234.56)
//	USD  US$ 1.234,56  (en: $1,234.56)
//	GBP  £ 1.234,56    (en: £1,234.56)
//	else 1.234,56 USDT (en: 1,234.56 USDT)
func FormatMoney(minor int64, currency Currency, en bool) string {
	thousands, decimal := ".", ","
	if en {
		thousands, decimal = ",", "."
	}
	var prefix, suffix string
	switch currency {
	case "", CurrencyBRL:
		prefix = "R$ "
	case "EUR":
		prefix, suffix = "", " €"
		if en {
			prefix, suffix = "€", ""
		}
	case "USD":
		prefix = "US$ "
		if en {
			prefix = "$"
		}
	case "GBP":
		prefix = "£ "
		if en {
			prefix = "£"
		}
	default:
		suffix = " " + string(currency)
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
	b.Grow(len(prefix) + len(suffix) + len(digits) + len(digits)/3 + 4)
	if neg {
		b.WriteByte('-')
	}
	b.WriteString(prefix)
	for i := range len(digits) {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteString(thousands)
		}
		b.WriteByte(digits[i])
	}
	b.WriteString(decimal)
	b.WriteByte(byte('0' + cents/10))
	b.WriteByte(byte('0' + cents%10))
	b.WriteString(suffix)
	return b.String()
}
