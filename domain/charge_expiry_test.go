package domain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

func TestExpire(t *testing.T) {
	t.Parallel()
	for _, from := range domain.TxStatuses {
		t.Run(string(from), func(t *testing.T) {
			t.Parallel()
			c := chargeInStatus(from)
			at := chargeT0.Add(2 * time.Hour)
			err := c.Expire(at)
			if from == domain.TxPending || from == domain.TxWaitingPayment {
				if err != nil || c.Status() != domain.TxExpired || !c.Snapshot().UpdatedAt.Equal(at) {
					t.Errorf("Expire = %v, status %s, updated %v; want EXPIRED at %v", err, c.Status(), c.Snapshot().UpdatedAt, at)
				}
				return
			}
			if !errors.Is(err, domain.ErrChargeNotExpirable) || c.Status() != from {
				t.Errorf("Expire = %v, status %s; want ErrChargeNotExpirable, %s", err, c.Status(), from)
			}
		})
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	cancellable := map[domain.TxStatus]bool{
		domain.TxWaitingPayment: true, domain.TxPending: true, domain.TxProcessing: true,
	}
	for _, from := range domain.TxStatuses {
		t.Run(string(from), func(t *testing.T) {
			t.Parallel()
			c := chargeInStatus(from)
			at := chargeT0.Add(time.Minute)
			err := c.Cancel(at)
			if cancellable[from] {
				if err != nil || c.Status() != domain.TxCancelled || !c.Snapshot().UpdatedAt.Equal(at) {
					t.Errorf("Cancel = %v, status %s; want CANCELLED", err, c.Status())
				}
				return
			}
			if !errors.Is(err, domain.ErrChargeNotCancellable) || c.Status() != from {
				t.Errorf("Cancel = %v, status %s; want ErrChargeNotCancellable, %s", err, c.Status(), from)
			}
		})
	}
}

func TestExpiredAt(t *testing.T) {
	t.Parallel()
	expiry := chargeT0.Add(time.Hour)
	tests := []struct {
		name   string
		status domain.TxStatus
		now    time.Time
		want   bool
	}{
		{"open, before expiry", domain.TxWaitingPayment, expiry.Add(-time.Nanosecond), false},
		{"open, at expiry", domain.TxWaitingPayment, expiry, true},
		{"open, after expiry", domain.TxWaitingPayment, expiry.Add(time.Hour), true},
		{"pending, after expiry", domain.TxPending, expiry.Add(time.Second), true},
		{"paid, after expiry", domain.TxPaid, expiry.Add(time.Hour), false},
		{"held for review, after expiry", domain.TxProcessing, expiry.Add(time.Hour), false},
		{"already expired", domain.TxExpired, expiry.Add(time.Hour), false},
		{"cancelled, after expiry", domain.TxCancelled, expiry.Add(time.Hour), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := chargeInStatus(tt.status).ExpiredAt(tt.now); got != tt.want {
				t.Errorf("ExpiredAt(%v) = %v, want %v", tt.now, got, tt.want)
			}
		})
	}
}
