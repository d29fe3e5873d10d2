package domain_test

import (
	"errors"
	"math"
	"testing"

	"github.com/quitapix/quita/domain"
)

const (
	sellerA = "acct_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	sellerB = "acct_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func TestParseSplitPercent(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"12.50": 1250, "12.5": 1250, "100": 10000, "0.01": 1, "7": 700, "99.99": 9999} {
		if got, ok := domain.ParseSplitPercent(in); !ok || got != want {
			t.Errorf("%q = %d %v, want %d", in, got, ok, want)
		}
		if back := domain.FormatSplitPercent(want); back != map[int64]string{1250: "12.50", 10000: "100.00", 1: "0.01", 700: "7.00", 9999: "99.99"}[want] {
			t.Errorf("format %d = %q", want, back)
		}
	}
	for _, in := range []string{"", "0", "0.00", "100.01", "12.505", "-1", "1e2", "12.", ".5", " 12", "12,50", "1000"} {
		if _, ok := domain.ParseSplitPercent(in); ok {
			t.Errorf("%q accepted", in)
		}
	}
}

// The rule: percents of the net rounded down to the centavo; fixed amounts
// as given (platform) or their proportion of the net (proportional); cut
// short in order when the net runs out; the platform gets the rest.
func TestSplitShares(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name         string
		payer        domain.FeePayer
		items        []domain.Split
		gross, net   int64
		want         []int64
		wantPlatform int64
	}{
		{"fixed and percent", domain.FeePayerPlatform, []domain.Split{{Account: sellerA, Amount: 3000}, {Account: sellerB, Percent: 1250}},
			10000, 9901, []int64{3000, 1237}, 5664},
		{"percents round down", domain.FeePayerPlatform, []domain.Split{{Account: sellerA, Percent: 3333}, {Account: sellerB, Percent: 3333}},
			100, 100, []int64{33, 33}, 34},
		{"all of it", domain.FeePayerPlatform, []domain.Split{{Account: sellerA, Percent: 10000}}, 1000, 990, []int64{990}, 0},
		{"proportional fixed", domain.FeePayerProportional, []domain.Split{{Account: sellerA, Amount: 5000}}, 10000, 9901, []int64{4950}, 4951},
		{"proportional percent is the same", domain.FeePayerProportional, []domain.Split{{Account: sellerA, Percent: 5000}}, 10000, 9901, []int64{4950}, 4951},
		{"net below the fixed shares: in order", domain.FeePayerPlatform, []domain.Split{{Account: sellerA, Amount: 600}, {Account: sellerB, Amount: 600}},
			1000, 900, []int64{600, 300}, 0},
		{"no net", domain.FeePayerPlatform, []domain.Split{{Account: sellerA, Amount: 600}}, 1000, 0, []int64{0}, 0},
		{"negative net is none", domain.FeePayerPlatform, []domain.Split{{Account: sellerA, Amount: 600}}, 1000, -5, []int64{0}, 0},
		{"huge amounts do not overflow", domain.FeePayerProportional, []domain.Split{{Account: sellerA, Amount: 1 << 60}, {Account: sellerB, Percent: 9999}},
			1 << 61, (1 << 61) - 7, []int64{(1 << 60) - 4, ((1<<61)-7-((1<<60)-4))/10000*9999 + ((1<<61)-7-((1<<60)-4))%10000*9999/10000}, 0},
	} {
		s := &domain.Splits{FeePayer: tt.payer, Items: tt.items}
		got, platform := s.Shares(tt.gross, tt.net)
		if tt.name == "huge amounts do not overflow" {
			// The second split wants 99.99 % of the net, more than is left
			// after the first: it gets what is left.
			tt.want[1] = tt.net - tt.want[0]
		}
		for i := range tt.want {
			if got[i] != tt.want[i] {
				t.Errorf("%s: shares %v, want %v", tt.name, got, tt.want)
				break
			}
		}
		if platform != tt.wantPlatform {
			t.Errorf("%s: platform %d, want %d", tt.name, platform, tt.wantPlatform)
		}
	}
}

func TestNewSplits(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		items   []domain.Split
		payer   domain.FeePayer
		field   domain.Field
		indexed bool
		index   int
	}{
		{"valid", []domain.Split{{Account: sellerA, Amount: 400}, {Account: sellerB, Percent: 5000}}, "", "", false, 0},
		{"fee payer", []domain.Split{{Account: sellerA, Amount: 1}}, "seller", domain.FieldFeePayer, false, 0},
		{"bad account", []domain.Split{{Account: "acct_x", Amount: 1}}, "", domain.FieldSplitAccount, true, 0},
		{"duplicate", []domain.Split{{Account: sellerA, Amount: 1}, {Account: sellerA, Amount: 1}}, "", domain.FieldSplitAccount, true, 1},
		{"neither", []domain.Split{{Account: sellerA}}, "", domain.FieldSplitAmount, true, 0},
		{"both", []domain.Split{{Account: sellerA, Amount: 1, Percent: 1}}, "", domain.FieldSplitAmount, true, 0},
		{"negative", []domain.Split{{Account: sellerA, Amount: -1}}, "", domain.FieldSplitAmount, true, 0},
		{"percent over 100", []domain.Split{{Account: sellerA, Percent: 10001}}, "", domain.FieldSplitPercent, true, 0},
		{"over the net", []domain.Split{{Account: sellerA, Amount: 500}, {Account: sellerB, Percent: 5100}}, "", domain.FieldSplits, false, 0},
		{"over the amount", []domain.Split{{Account: sellerA, Amount: 1 << 62}, {Account: sellerB, Amount: 1 << 62}}, "", domain.FieldSplits, false, 0},
	} {
		_, err := domain.NewSplits(tt.items, tt.payer, 1000, 990)
		if tt.field == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		var ve *domain.ValidationError
		if !errors.As(err, &ve) || ve.Field != tt.field || ve.Indexed != tt.indexed || ve.Index != tt.index {
			t.Errorf("%s: %v, want %s (indexed %v at %d)", tt.name, err, tt.field, tt.indexed, tt.index)
		}
	}
	many := make([]domain.Split, domain.MaxSplits+1)
	for i := range many {
		many[i] = domain.Split{Account: "acct_" + string(rune('a'+i)) + "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", Amount: 1}
	}
	if _, err := domain.NewSplits(many, "", 1000, 990); err == nil {
		t.Error("21 splits accepted")
	}
	if s, err := domain.NewSplits(nil, "", 1000, 990); s != nil || err != nil {
		t.Errorf("no splits: %v %v", s, err)
	}
}

// FuzzSplitShares: whatever the splits, amount and net, no share is
// negative, none exceeds what it asked, and the shares plus the
// platform's make the net exactly.
func FuzzSplitShares(f *testing.F) {
	f.Add(int64(10000), int64(99), int64(3000), int64(1250), int64(0), false)
	f.Add(int64(1), int64(1), int64(1), int64(10000), int64(10000), true)
	f.Add(int64(1<<62), int64(12345), int64(1<<61), int64(9999), int64(1), true)
	f.Fuzz(func(t *testing.T, gross, fees, fixed, pctA, pctB int64, proportional bool) {
		if gross <= 0 || gross > domain.MaxAmount*1000 || fees < 0 || fees > gross {
			return
		}
		pctA, pctB = abs(pctA)%10001, abs(pctB)%10001
		payer := domain.FeePayerPlatform
		if proportional {
			payer = domain.FeePayerProportional
		}
		items := []domain.Split{{Account: sellerA, Amount: max(abs(fixed)%(gross+1), 1)}}
		if pctA > 0 {
			items = append(items, domain.Split{Account: sellerB, Percent: pctA})
		}
		if pctB > 0 {
			items = append(items, domain.Split{Account: "acct_ccccccccccccccccccccccccccccccccccc", Percent: pctB})
		}
		s := &domain.Splits{FeePayer: payer, Items: items}
		net := gross - fees
		shares, platform := s.Shares(gross, net)
		total := platform
		if platform < 0 {
			t.Fatalf("platform share %d", platform)
		}
		for i, sh := range shares {
			if sh < 0 || sh > net {
				t.Fatalf("share %d = %d of net %d", i, sh, net)
			}
			total += sh
		}
		if total != net {
			t.Fatalf("shares %v + platform %d = %d, want net %d", shares, platform, total, net)
		}
		// What NewSplits accepts is never cut short.
		if v, err := domain.NewSplits(items, payer, gross, net); err == nil && v != nil {
			for i, it := range items {
				if it.Percent == 0 && payer == domain.FeePayerPlatform && shares[i] != it.Amount {
					t.Fatalf("accepted fixed split %d got %d of %d", i, shares[i], it.Amount)
				}
			}
		}
	})
}

func abs(v int64) int64 {
	if v == math.MinInt64 {
		return math.MaxInt64
	}
	if v < 0 {
		return -v
	}
	return v
}
