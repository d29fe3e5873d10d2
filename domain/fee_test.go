package domain_test

import (
	"testing"

	"github.com/quitapix/quita/domain"
)

func TestFeeRoundingHalfUp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fee    domain.Fee
		amount int64
		want   int64
	}{
		{domain.Fee{BPS: 50}, 10000, 50},
		{domain.Fee{BPS: 50}, 100, 1}, // 0.5 rounds up
		{domain.Fee{BPS: 50}, 99, 0},  // 0.495 rounds down
		{domain.Fee{BPS: 49}, 102, 0}, // 0.4998 rounds down
		{domain.Fee{BPS: 49}, 103, 1}, // 0.5047 rounds up
		{domain.Fee{BPS: 349, Fixed: 39}, 10000, 388},
		{domain.Fee{BPS: 299}, 1, 0},
		{domain.Fee{BPS: 299}, 0, 0},
		{domain.Fee{BPS: 10_000}, 12345, 12345},
	}
	for _, tt := range tests {
		if got := tt.fee.Of(tt.amount); got != tt.want {
			t.Errorf("%+v of %d = %d, want %d", tt.fee, tt.amount, got, tt.want)
		}
	}
	s := domain.FeeSchedule{Provider: domain.Fee{BPS: 299}, Platform: domain.Fee{BPS: 349, Fixed: 39}}
	f := s.Apply(50)
	if f.Net(50) < 0 || f.Provider+f.Platform > 50 {
		t.Errorf("fees %+v exceed a tiny amount", f)
	}
	if f := s.Apply(10000); f.Net(10000) != 9313 {
		t.Errorf("card net of 10000 = %d, want 9313", f.Net(10000))
	}
}
