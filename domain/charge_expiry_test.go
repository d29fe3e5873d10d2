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

func TestExpiryDue(t *testing.T) {
	t.Parallel()
	expiry := chargeT0.Add(time.Hour)
	const grace = 3 * time.Minute
	tests := []struct {
		name   string
		status domain.TxStatus
		now    time.Time
		grace  time.Duration
		want   bool
	}{
		{"open, before expiry", domain.TxWaitingPayment, expiry.Add(-time.Nanosecond), grace, false},
		{"open, at expiry: in the grace", domain.TxWaitingPayment, expiry, grace, false},
		{"open, just before the grace ends", domain.TxWaitingPayment, expiry.Add(grace - time.Nanosecond), grace, false},
		{"open, when the grace ends", domain.TxWaitingPayment, expiry.Add(grace), grace, true},
		{"pending, after the grace", domain.TxPending, expiry.Add(grace + time.Second), grace, true},
		{"open, at expiry, no grace", domain.TxWaitingPayment, expiry, 0, true},
		{"open, at expiry, negative grace is none", domain.TxWaitingPayment, expiry, -time.Hour, true},
		{"paid, after the grace", domain.TxPaid, expiry.Add(time.Hour), grace, false},
		{"held for review, after the grace", domain.TxProcessing, expiry.Add(time.Hour), grace, false},
		{"already expired", domain.TxExpired, expiry.Add(time.Hour), grace, false},
		{"cancelled, after the grace", domain.TxCancelled, expiry.Add(time.Hour), grace, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := chargeInStatus(tt.status).ExpiryDue(tt.now, tt.grace); got != tt.want {
				t.Errorf("ExpiryDue(%v, %v) = %v, want %v", tt.now, tt.grace, got, tt.want)
			}
		})
	}
}

func TestPayableAt(t *testing.T) {
	t.Parallel()
	expiry := chargeT0.Add(time.Hour)
	tests := []struct {
		name   string
		status domain.TxStatus
		at     time.Time
		want   bool
	}{
		{"open, before expiry", domain.TxWaitingPayment, expiry.Add(-time.Nanosecond), true},
		{"pending, before expiry", domain.TxPending, expiry.Add(-time.Minute), true},
		{"open, at expiry", domain.TxWaitingPayment, expiry, false},
		{"open, after expiry", domain.TxWaitingPayment, expiry.Add(time.Second), false},
		{"expired, before expiry", domain.TxExpired, expiry.Add(-time.Minute), false},
		{"paid, before expiry", domain.TxPaid, expiry.Add(-time.Minute), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := chargeInStatus(tt.status).PayableAt(tt.at); got != tt.want {
				t.Errorf("PayableAt(%v) = %v, want %v", tt.at, got, tt.want)
			}
		})
	}
}

// In the expiry grace the charge is still open: a Pix paid before
// expires_at settles it however late it is reported, one paid at or after
// expires_at is refused, and a settling transition asked now is too late.
func TestSettleInTheExpiryGrace(t *testing.T) {
	t.Parallel()
	expiry := chargeT0.Add(time.Hour)
	reported := expiry.Add(2 * time.Minute) // what the app's clock says; SettlePix never sees it

	c := chargeOpen(t, "")
	p := chargePayment("")
	p.PaidAt = expiry.Add(-5 * time.Second)
	if c.ExpiryDue(reported, 3*time.Minute) {
		t.Fatal("due in the grace")
	}
	got, err := c.SettlePix(p, chargePixFees)
	if err != nil || got != domain.OutcomePaid || c.Status() != domain.TxPaid || !c.Credited() {
		t.Fatalf("paid 5 s before expiry = %q, %v, %s; want paid and credited", got, err, c.Status())
	}
	if !c.Settlement().PaidAt.Equal(p.PaidAt) {
		t.Errorf("settled at %v, want the payment's own time %v", c.Settlement().PaidAt, p.PaidAt)
	}

	late := chargeOpen(t, "")
	p.PaidAt = expiry
	if _, err := late.SettlePix(p, chargePixFees); !errors.Is(err, domain.ErrChargeExpired) || late.Status() != domain.TxWaitingPayment {
		t.Errorf("paid at expiry: %v, %s; want ErrChargeExpired and still open", err, late.Status())
	}

	card := chargeInStatus(domain.TxWaitingPayment)
	if err := card.Transition(domain.TxPaid, domain.MethodPix, nil, chargeE2E, expiry); !errors.Is(err, domain.ErrChargeExpired) || card.Status() != domain.TxWaitingPayment {
		t.Errorf("settling transition at expiry: %v, %s; want ErrChargeExpired", err, card.Status())
	}
	if err := card.Transition(domain.TxPaid, domain.MethodPix, nil, chargeE2E, expiry.Add(-time.Second)); err != nil || card.Status() != domain.TxPaid {
		t.Errorf("settling transition before expiry: %v, %s", err, card.Status())
	}
	refused := chargeInStatus(domain.TxWaitingPayment)
	if err := refused.Transition(domain.TxRefused, "", nil, "", reported); err != nil {
		t.Errorf("a refusal in the grace: %v", err)
	}
}
