package domain_test

import (
	"encoding/json"
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

// A cashout shows the key it was sent to masked as a payout's
// destination is; a devolution and a cashout to the payer's document name
// no key. The payment.refunded event carries the same, never the key.
func TestRefundDestinationIsMasked(t *testing.T) {
	t.Parallel()
	cases := []struct {
		strategy domain.RefundStrategy
		key      string
		want     domain.RefundDestination
		ok       bool
	}{
		{domain.StrategyCashout, "maria.silva@example.com", domain.RefundDestination{Type: domain.PixKeyEmail, Key: "m***@example.com"}, true},
		{domain.StrategyCashout, "+55 11 98765-4321", domain.RefundDestination{Type: domain.PixKeyPhone, Key: "+5511*****4321"}, true},
		{domain.StrategyCashout, "529.982.247-25", domain.RefundDestination{Type: domain.PixKeyCPF, Key: "***.982.247-**"}, true},
		{domain.StrategyCashout, "11444777000161", domain.RefundDestination{Type: domain.PixKeyCNPJ, Key: "**.444.777/0001-**"}, true},
		{domain.StrategyCashout, "123E4567-E89B-12D3-A456-426614174000",
			domain.RefundDestination{Type: domain.PixKeyEVP, Key: "123e4567-e89b-12d3-a456-426614174000"}, true},
		{domain.StrategyCashout, "not a key", domain.RefundDestination{Key: "****"}, true},
		{domain.StrategyCashout, "", domain.RefundDestination{}, false},
		{domain.StrategyDevolution, "maria.silva@example.com", domain.RefundDestination{}, false},
		{"", "maria.silva@example.com", domain.RefundDestination{}, false},
	}
	c := settledCharge(t, 10000, domain.MethodPix, "BRL")
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	for _, tc := range cases {
		r := domain.Refund{ID: "r1", ChargeID: c.ID(), Amount: 700, Currency: "BRL", Status: domain.RefundPending,
			Strategy: tc.strategy, DestinationKey: tc.key}
		if got, ok := r.Destination(); got != tc.want || ok != tc.ok {
			t.Errorf("%s to %q: %+v %v, want %+v %v", tc.strategy, tc.key, got, ok, tc.want, tc.ok)
		}
		ev, err := domain.RefundEvent(c, r, "ev1", now)
		if err != nil {
			t.Fatal(err)
		}
		var env domain.LegacyEnvelope
		if err := json.Unmarshal(ev.Payload, &env); err != nil {
			t.Fatal(err)
		}
		d := env.Data
		if d.RefundStrategy != string(tc.strategy) || d.RefundDestinationKey != tc.want.Key || d.RefundDestinationKeyType != string(tc.want.Type) {
			t.Errorf("%s to %q: event data %+v", tc.strategy, tc.key, d)
		}
		if tc.key != "" && tc.want.Key != tc.key && strings.Contains(string(ev.Payload), tc.key) {
			t.Errorf("the event holds the key %q in clear: %s", tc.key, ev.Payload)
		}
	}
}

// Only a CPF or CNPJ key equal to the document the payer's bank disclosed
// is the payer's own; with none disclosed no key is.
func TestKeyIsPayerDocument(t *testing.T) {
	t.Parallel()
	key := func(raw string) domain.PixKey {
		k, err := domain.ParsePixKey(raw, "")
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	for _, tc := range []struct {
		key, payer string
		want       bool
	}{
		{"529.982.247-25", "52998224725", true},
		{"52998224725", "529.982.247-25", true},
		{"11.444.777/0001-61", "11444777000161", true},
		{"52998224725", "", false},
		{"52998224725", "39053344705", false},
		{"maria@example.com", "52998224725", false},
		{"+5511987654321", "52998224725", false},
	} {
		if got := domain.KeyIsPayerDocument(key(tc.key), tc.payer); got != tc.want {
			t.Errorf("%s for payer %q: %v, want %v", tc.key, tc.payer, got, tc.want)
		}
	}
}
