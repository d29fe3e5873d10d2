package domain_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/quitapix/quita/domain"
)

func TestFormatDecimal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   int64
		want string
	}{
		{0, "0.00"},
		{1, "0.01"},
		{10, "0.10"},
		{99, "0.99"},
		{100, "1.00"},
		{12345, "123.45"},
		{-1, "-0.01"},
		{-12345, "-123.45"},
		{domain.MaxAmount, "100000000000.00"},
		{math.MaxInt64, "92233720368547758.07"},
		{math.MinInt64, "-92233720368547758.08"},
	}
	for _, tt := range tests {
		if got := domain.FormatDecimal(tt.in); got != tt.want {
			t.Errorf("FormatDecimal(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseDecimal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"0.0", 0},
		{"0.00", 0},
		{"1", 100},
		{"1.5", 150},
		{"1.05", 105},
		{"123.45", 12345},
		{"007.50", 750},
		{"100000000000.00", domain.MaxAmount},
		{"9999999999999.99", 999_999_999_999_999},
	}
	for _, tt := range tests {
		got, err := domain.ParseDecimal(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseDecimal(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestParseDecimalRejects(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"", ".", ".5", "1.", "1.234", "1.5.0", "-1", "-0.01", "+1", "1,50", " 1", "1 ", "1e2", "0x10",
		"١٢", "1.٥", "10000000000000", "99999999999999.99", "NaN", "1..5",
	} {
		if got, err := domain.ParseDecimal(in); err == nil {
			t.Errorf("ParseDecimal(%q) = %d, want an error", in, got)
		}
	}
}

func TestFeeOfRoundsHalfUp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		fee    domain.Fee
		amount int64
		want   int64
	}{
		{"exact", domain.Fee{BPS: 50}, 10_000, 50},
		{"exactly half rounds up", domain.Fee{BPS: 50}, 100, 1},                // 0.5
		{"one and a half rounds up", domain.Fee{BPS: 50}, 300, 2},              // 1.5
		{"two and a half rounds up, not to even", domain.Fee{BPS: 5000}, 5, 3}, // 2.5
		{"half of one centavo", domain.Fee{BPS: 5000}, 1, 1},                   // 0.5
		{"just below half rounds down", domain.Fee{BPS: 50}, 99, 0},            // 0.495
		{"just above half rounds up", domain.Fee{BPS: 50}, 101, 1},             // 0.505
		{"0.4999 rounds down", domain.Fee{BPS: 4999}, 1, 0},
		{"pix platform 49 bps", domain.Fee{BPS: 49}, 1_000, 5},         // 4.9
		{"pix platform 49 bps on 1 real", domain.Fee{BPS: 49}, 100, 0}, // 0.49
		{"with fixed part", domain.Fee{BPS: 349, Fixed: 39}, 10_000, 388},
		{"fixed only", domain.Fee{Fixed: 39}, 1, 39},
		{"zero fee", domain.Fee{}, 10_000, 0},
		{"zero amount owes nothing, not even the fixed part", domain.Fee{BPS: 50, Fixed: 39}, 0, 0},
		{"negative amount owes nothing", domain.Fee{BPS: 50, Fixed: 39}, -10_000, 0},
		{"whole amount at the maximum", domain.Fee{BPS: 10_000}, domain.MaxAmount, domain.MaxAmount},
		{"large amount, no overflow", domain.Fee{BPS: 299}, domain.MaxAmount, 299_000_000_000},
	}
	for _, tt := range tests {
		if got := tt.fee.Of(tt.amount); got != tt.want {
			t.Errorf("%s: %+v.Of(%d) = %d, want %d", tt.name, tt.fee, tt.amount, got, tt.want)
		}
	}
}

func TestFeeScheduleApply(t *testing.T) {
	t.Parallel()
	pix := domain.FeeSchedule{Provider: domain.Fee{BPS: 50}, Platform: domain.Fee{BPS: 49}}
	card := domain.FeeSchedule{Provider: domain.Fee{BPS: 349, Fixed: 39}, Platform: domain.Fee{BPS: 299}}
	tests := []struct {
		name     string
		schedule domain.FeeSchedule
		amount   int64
		want     domain.Fees
		wantNet  int64
	}{
		{"pix on R$ 100", pix, 10_000, domain.Fees{Provider: 50, Platform: 49}, 9_901},
		{"pix on R$ 1", pix, 100, domain.Fees{Provider: 1, Platform: 0}, 99},
		{"pix on 1 centavo", pix, 1, domain.Fees{}, 1},
		{"card on R$ 100", card, 10_000, domain.Fees{Provider: 388, Platform: 299}, 9_313},
		{"fixed fee larger than the amount: provider capped, platform gives way", card, 20, domain.Fees{Provider: 20, Platform: 0}, 0},
		{"fees together larger than the amount: platform gives way", domain.FeeSchedule{
			Provider: domain.Fee{Fixed: 60}, Platform: domain.Fee{Fixed: 60},
		}, 100, domain.Fees{Provider: 60, Platform: 40}, 0},
		{"zero amount", card, 0, domain.Fees{}, 0},
	}
	for _, tt := range tests {
		got := tt.schedule.Apply(tt.amount)
		if got != tt.want {
			t.Errorf("%s: Apply(%d) = %+v, want %+v", tt.name, tt.amount, got, tt.want)
		}
		if net := got.Net(tt.amount); net != tt.wantNet {
			t.Errorf("%s: Net = %d, want %d", tt.name, net, tt.wantNet)
		}
	}
}

// Whatever the schedule, a payment never costs the merchant more than it
// brought: both fees are non-negative and net = amount − fees ≥ 0 exactly.
func TestFeeScheduleApplyNeverMakesNetNegative(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20_000 {
		s := domain.FeeSchedule{
			Provider: domain.Fee{BPS: rng.Int64N(20_001), Fixed: rng.Int64N(1_000)},
			Platform: domain.Fee{BPS: rng.Int64N(20_001), Fixed: rng.Int64N(1_000)},
		}
		amount := rng.Int64N(2_000)
		if rng.IntN(10) == 0 {
			amount = rng.Int64N(domain.MaxAmount) + 1
		}
		f := s.Apply(amount)
		if f.Provider < 0 || f.Platform < 0 || f.Provider+f.Platform > amount {
			t.Fatalf("%+v.Apply(%d) = %+v: fees negative or above the amount", s, amount, f)
		}
		if net := f.Net(amount); net != amount-f.Provider-f.Platform {
			t.Fatalf("%+v.Apply(%d) = %+v: Net %d ≠ amount − fees", s, amount, f, net)
		}
		if f.Provider != min(s.Provider.Of(amount), amount) {
			t.Fatalf("%+v.Apply(%d): provider fee %d, want %d", s, amount, f.Provider, min(s.Provider.Of(amount), amount))
		}
	}
}

func TestFeesNet(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fees   domain.Fees
		amount int64
		want   int64
	}{
		{domain.Fees{}, 10_000, 10_000},
		{domain.Fees{Provider: 10, Platform: 20}, 100, 70},
		{domain.Fees{Provider: 50, Platform: 50}, 100, 0},
		{domain.Fees{Provider: 60, Platform: 50}, 100, 0}, // capped, never negative
		{domain.Fees{Provider: 1}, 0, 0},
	}
	for _, tt := range tests {
		if got := tt.fees.Net(tt.amount); got != tt.want {
			t.Errorf("%+v.Net(%d) = %d, want %d", tt.fees, tt.amount, got, tt.want)
		}
	}
}

func TestParseCurrency(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"", "BRL", true},
		{"BRL", "BRL", true},
		{"brl", "BRL", true},
		{" eur ", "EUR", true},
		{"USDT", "USDT", true},
		{"ABCDEFGH", "ABCDEFGH", true},
		{"BR", "", false},
		{"ABCDEFGHI", "", false},
		{"R$", "", false},
		{"US-D", "", false},
	}
	for _, tt := range tests {
		got, err := domain.ParseCurrency(tt.in)
		if (err == nil) != tt.ok || string(got) != tt.want {
			t.Errorf("ParseCurrency(%q) = %q, %v; want %q ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// FuzzParseDecimal: no input panics, and whatever parses is a non-negative
// amount that survives FormatDecimal → ParseDecimal unchanged.
func FuzzParseDecimal(f *testing.F) {
	for _, s := range []string{"0", "0.01", "1.5", "123.45", "007.50", "9999999999999.99", "10000000000000", "1.", ".5", "-1", "1.234", "1e3", "١"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := domain.ParseDecimal(s)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("ParseDecimal(%q) = %d, negative", s, n)
		}
		if strings.Trim(s, "0123456789.") != "" || strings.Count(s, ".") > 1 {
			t.Fatalf("ParseDecimal(%q) accepted a character other than digits and one dot", s)
		}
		formatted := domain.FormatDecimal(n)
		back, err := domain.ParseDecimal(formatted)
		if err != nil || back != n {
			t.Fatalf("ParseDecimal(%q) = %d; FormatDecimal → %q → %d, %v", s, n, formatted, back, err)
		}
	})
}

// security.md, item 13: money sums never wrap.
func TestCheckedMoney(t *testing.T) {
	t.Parallel()
	const maxI, minI = math.MaxInt64, math.MinInt64
	for _, tc := range []struct {
		name string
		got  func() (int64, error)
		want int64
		ok   bool
	}{
		{"add", func() (int64, error) { return domain.AddMoney(2, 3) }, 5, true},
		{"add to the top", func() (int64, error) { return domain.AddMoney(maxI-1, 1) }, maxI, true},
		{"add past the top", func() (int64, error) { return domain.AddMoney(maxI, 1) }, 0, false},
		{"add past the bottom", func() (int64, error) { return domain.AddMoney(minI, -1) }, 0, false},
		{"sub", func() (int64, error) { return domain.SubMoney(2, 3) }, -1, true},
		{"sub of MinInt64", func() (int64, error) { return domain.SubMoney(0, minI) }, 0, false},
		{"sub past the bottom", func() (int64, error) { return domain.SubMoney(minI, 1) }, 0, false},
		{"sum", func() (int64, error) { return domain.SumMoney(1, 2, 3) }, 6, true},
		{"sum that wraps to zero", func() (int64, error) { return domain.SumMoney(maxI, maxI, 2) }, 0, false},
	} {
		got, err := tc.got()
		if tc.ok != (err == nil) || (tc.ok && got != tc.want) || (!tc.ok && !errors.Is(err, domain.ErrMoneyOverflow)) {
			t.Errorf("%s: %d, %v", tc.name, got, err)
		}
	}
}

// security.md, item 13: fees are bounded, and a fee built past the bounds
// saturates rather than wrapping into a negative or tiny charge.
func TestFeeBounds(t *testing.T) {
	t.Parallel()
	for _, f := range []domain.Fee{{BPS: -1}, {BPS: 10_001}, {Fixed: -1}, {Fixed: domain.MaxFeeFixed + 1}, {BPS: 50, Fixed: math.MaxInt64}} {
		if f.Validate() == nil {
			t.Errorf("%+v validates", f)
		}
	}
	if err := (domain.Fee{BPS: domain.MaxFeeBPS, Fixed: domain.MaxFeeFixed}).Validate(); err != nil {
		t.Errorf("the bounds themselves: %v", err)
	}
	huge := domain.FeeSchedule{Provider: domain.Fee{BPS: 50, Fixed: math.MaxInt64}}
	if got := huge.Provider.Of(10_000); got != math.MaxInt64 {
		t.Errorf("huge fee on 10000: %d, want saturated", got)
	}
	fees := huge.Apply(10_000)
	if fees.Provider != 10_000 || fees.Platform != 0 || fees.Net(10_000) != 0 {
		t.Errorf("huge fee applied: %+v", fees)
	}
	if got := (domain.Fee{BPS: 10_000}).Of(math.MaxInt64); got != math.MaxInt64 {
		t.Errorf("100%% of MaxInt64: %d", got)
	}
}

// security.md, item 13: postings that balance only modulo 2^64 are refused.
func TestEntryThatBalancesOnlyByWrapping(t *testing.T) {
	t.Parallel()
	e := domain.JournalEntry{ID: "je_1", Postings: []domain.Posting{
		{Account: domain.LedgerAvailable, Currency: "BRL", Amount: math.MaxInt64},
		{Account: domain.LedgerPending, Currency: "BRL", Amount: math.MaxInt64},
		{Account: domain.LedgerAcquirer, Currency: "BRL", Amount: 2},
	}}
	if err := e.Validate(); !errors.Is(err, domain.ErrMoneyOverflow) {
		t.Fatalf("wrapping entry: %v", err)
	}
}
