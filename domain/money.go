package domain

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Currency is an ISO 4217 code (or a crypto ticker on the payments surface),
// always upper case.
type Currency string

// CurrencyBRL is the Brazilian real, the only currency Pix accepts.
const CurrencyBRL Currency = "BRL"

// ParseCurrency normalises and validates a currency code of 3 to 8 letters
// or digits. Empty input yields the default, BRL.
func ParseCurrency(s string) (Currency, error) {
	if s == "" {
		return CurrencyBRL, nil
	}
	s = strings.ToUpper(strings.TrimSpace(s))
	if len(s) < 3 || len(s) > 8 {
		return "", Invalid(FieldCurrency, "%s must be 3 to 8 characters", FieldCurrency)
	}
	for _, r := range s {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return "", Invalid(FieldCurrency, "%s must be letters and digits", FieldCurrency)
		}
	}
	return Currency(s), nil
}

// MaxAmount bounds any single amount so that sums over many charges stay far
// from int64 overflow (10^13 minor units = R$ 100 billion).
const MaxAmount int64 = 10_000_000_000_000

// FormatDecimal renders minor units with two decimals ("12345" → "123.45"),
// the form the Pix APIs use. No float is involved.
func FormatDecimal(minor int64) string {
	sign, u := "", uint64(minor)
	if minor < 0 {
		// Negate as unsigned: -math.MinInt64 does not fit an int64.
		sign, u = "-", -u
	}
	return fmt.Sprintf("%s%d.%02d", sign, u/100, u%100)
}

// ParseDecimal reads a decimal string with at most two fraction digits into
// minor units ("123.4" → 12340). No float is involved.
func ParseDecimal(s string) (int64, error) {
	whole, frac, hasFrac := strings.Cut(s, ".")
	if whole == "" || (hasFrac && (len(frac) == 0 || len(frac) > 2)) {
		return 0, fmt.Errorf("decimal %q: want digits with up to two decimals", s)
	}
	for _, part := range []string{whole, frac} {
		for _, r := range part {
			if r < '0' || r > '9' {
				return 0, fmt.Errorf("decimal %q: want digits with up to two decimals", s)
			}
		}
	}
	if len(whole) > 13 {
		return 0, fmt.Errorf("decimal %q: too large", s)
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("decimal %q: %w", s, err)
	}
	for len(frac) < 2 {
		frac += "0"
	}
	f, _ := strconv.ParseInt(frac, 10, 64)
	return w*100 + f, nil
}

// ErrMoneyOverflow is a money sum beyond int64: the operation is refused
// rather than wrapped into a plausible-looking wrong amount.
var ErrMoneyOverflow = errors.New("money: sum out of int64 range")

// AddMoney is a + b, or ErrMoneyOverflow.
func AddMoney(a, b int64) (int64, error) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, ErrMoneyOverflow
	}
	return s, nil
}

// SubMoney is a - b, or ErrMoneyOverflow.
func SubMoney(a, b int64) (int64, error) {
	if b == math.MinInt64 {
		return 0, ErrMoneyOverflow
	}
	return AddMoney(a, -b)
}

// SumMoney adds xs, or returns ErrMoneyOverflow.
func SumMoney(xs ...int64) (int64, error) {
	var s int64
	for _, x := range xs {
		var err error
		if s, err = AddMoney(s, x); err != nil {
			return 0, err
		}
	}
	return s, nil
}

// Fee bounds: a percentage of at most 100 % and a fixed part of at most
// R$ 1,000,000.00. Within them no fee on an amount up to MaxAmount comes
// near int64's range.
const (
	MaxFeeBPS   int64 = 10_000
	MaxFeeFixed int64 = 100_000_000
)

// Fee is a percentage in basis points plus a fixed part in minor units.
type Fee struct {
	BPS   int64 `json:"bps"`
	Fixed int64 `json:"fixed"`
}

// Validate checks the fee's bounds.
func (f Fee) Validate() error {
	if f.BPS < 0 || f.BPS > MaxFeeBPS || f.Fixed < 0 || f.Fixed > MaxFeeFixed {
		return Invalid(FieldFee, "fees are 0 to %d bps plus a fixed part of 0 to %d minor units", MaxFeeBPS, MaxFeeFixed)
	}
	return nil
}

// Of computes the fee on amount, rounding half up to the minor unit, using
// integer arithmetic only. A fee outside Validate's bounds saturates at
// math.MaxInt64 instead of wrapping (Apply then caps it at the amount).
func (f Fee) Of(amount int64) int64 {
	if amount <= 0 {
		return 0
	}
	if f.Validate() == nil && amount <= MaxAmount {
		return (amount*f.BPS+5_000)/10_000 + f.Fixed
	}
	if f.BPS < 0 || f.Fixed < 0 {
		return 0
	}
	if f.BPS != 0 && amount > (math.MaxInt64-5_000)/f.BPS {
		return math.MaxInt64
	}
	fee, err := AddMoney((amount*f.BPS+5_000)/10_000, f.Fixed)
	if err != nil {
		return math.MaxInt64
	}
	return fee
}

// Fees is what one settled payment costs the merchant.
type Fees struct {
	Provider int64
	Platform int64
}

// Net is amount less both fees, never negative: fees larger than the amount
// are capped so the merchant is never debited by a payment.
func (f Fees) Net(amount int64) int64 {
	n := amount - f.Provider - f.Platform
	if n < 0 {
		return 0
	}
	return n
}

// FeeSchedule holds the provider and platform fee of one payment method.
type FeeSchedule struct {
	Provider Fee `json:"provider"`
	Platform Fee `json:"platform"`
}

// Apply computes both fees for amount, capping them so that the net amount
// is never negative (the platform fee gives way first).
func (s FeeSchedule) Apply(amount int64) Fees {
	p := min(s.Provider.Of(amount), amount)
	pl := min(s.Platform.Of(amount), amount-p)
	return Fees{Provider: p, Platform: pl}
}
