package domain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

func TestRefundReservation(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	c := settledCharge(t, 1000, domain.MethodPix, "BRL")
	if err := c.ReserveRefund(600, now); err != nil {
		t.Fatal(err)
	}
	if err := c.ReserveRefund(401, now); !errors.Is(err, domain.ErrRefundExceedsAmount) {
		t.Errorf("over-refund: %v", err)
	}
	if err := c.ReserveRefund(400, now); err != nil {
		t.Fatal(err)
	}
	if err := c.ReleaseRefund(400, now); err != nil || c.RefundableAmount() != 400 {
		t.Errorf("release: %v, refundable %d", err, c.RefundableAmount())
	}
	if err := c.CompleteRefund(600, now); err != nil || c.Status() != domain.TxPaid {
		t.Errorf("partial completion: %v %s", err, c.Status())
	}
	if err := c.ReserveRefund(400, now); err != nil {
		t.Fatal(err)
	}
	if err := c.CompleteRefund(400, now); err != nil || c.Status() != domain.TxRefunded {
		t.Errorf("full completion: %v %s", err, c.Status())
	}
	boleto := settledCharge(t, 1000, domain.MethodBoleto, "BRL")
	if err := boleto.ReserveRefund(1, now); !errors.Is(err, domain.ErrRefundNotSupported) {
		t.Errorf("boleto refund: %v", err)
	}
	r := domain.Refund{Status: domain.RefundPending}
	if r.Advance(domain.RefundRefunded, now) == nil {
		t.Error("PENDING → REFUNDED skipped IN_PROGRESS")
	}
	if r.Advance(domain.RefundInProgress, now) != nil || r.Advance(domain.RefundRefunded, now) != nil ||
		!errors.Is(r.Advance(domain.RefundFailed, now), domain.ErrRefundNotOpen) {
		t.Errorf("refund steps: %+v", r)
	}
}

// A refund's destination key is bounded whatever the strategy; the
// refusal names the key's field and never repeats the key.
func TestCheckRefundDestinationKey(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"", "maria@example.com", strings.Repeat("é", domain.MaxRefundDestinationKeyLen)} {
		if err := domain.CheckRefundDestinationKey(ok); err != nil {
			t.Errorf("%d characters: %v", len([]rune(ok)), err)
		}
	}
	long := strings.Repeat("k", domain.MaxRefundDestinationKeyLen+1)
	err := domain.CheckRefundDestinationKey(long)
	var ve *domain.ValidationError
	if !errors.As(err, &ve) || ve.Field != domain.FieldRefundKey || ve.Code != domain.CodeParameterInvalid ||
		strings.Contains(ve.Error(), long) {
		t.Fatalf("%d characters: %v", domain.MaxRefundDestinationKeyLen+1, err)
	}
}

// A refund accepted while the charge was paid settles whatever the charge
// became meanwhile: during a dispute a full refund closes it as REFUNDED,
// and a charge charged back keeps CHARGEBACK with the refund completed.
func TestCompleteRefundDuringDisputes(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		path []domain.TxStatus
		want domain.TxStatus
	}{
		{[]domain.TxStatus{domain.TxDispute}, domain.TxRefunded},
		{[]domain.TxStatus{domain.TxChargeback}, domain.TxChargeback},
		{[]domain.TxStatus{domain.TxDispute, domain.TxChargeback}, domain.TxChargeback},
	} {
		c := settledCharge(t, 1000, domain.MethodCreditCard, "BRL")
		if err := c.ReserveRefund(1000, now); err != nil {
			t.Fatal(err)
		}
		for _, to := range tc.path {
			if err := c.Transition(to, "", nil, "", now); err != nil {
				t.Fatalf("%v: %v", tc.path, err)
			}
		}
		if err := c.CompleteRefund(1000, now); err != nil || c.Status() != tc.want || c.RefundCompleted() != 1000 {
			t.Errorf("%v: %v, status %s, completed %d; want %s, 1000", tc.path, err, c.Status(), c.RefundCompleted(), tc.want)
		}
		// A refused completion changes nothing.
		before := c.Snapshot()
		if err := c.CompleteRefund(1, now.Add(time.Hour)); !errors.Is(err, domain.ErrRefundExceedsAmount) {
			t.Errorf("%v: over-completion: %v", tc.path, err)
		}
		if after := c.Snapshot(); after.RefundCompleted != before.RefundCompleted || !after.UpdatedAt.Equal(before.UpdatedAt) {
			t.Errorf("%v: a refused completion changed the charge", tc.path)
		}
	}
}
