package domain_test

import (
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

func TestTransitionRules(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	c, err := domain.NewCharge(domain.NewChargeParams{ID: strings.Repeat("b", 26), AccountID: "a", Mode: domain.ModeTest,
		Amount: 100, Currency: "EUR", Methods: []domain.Method{domain.MethodMultibanco}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	_ = c.AttachMethods(domain.MethodDetails{}, "sandbox", "", now)
	if err := c.Transition(domain.TxApproved, "", nil, "", now); err == nil {
		t.Error("multibanco approved as a card")
	}
	if err := c.Transition(domain.TxRefunded, "", nil, "", now); err == nil {
		t.Error("REFUNDED reached without a refund")
	}
	if err := c.Transition(domain.TxPaid, domain.MethodPix, nil, "", now); err == nil {
		t.Error("paid with a method the charge does not offer")
	}
	if err := c.Transition(domain.TxPaid, "", nil, "", now); err != nil || c.Settlement().PaidWith != domain.MethodMultibanco {
		t.Errorf("paid: %v", err)
	}
	if _, err := domain.NewCharge(domain.NewChargeParams{ID: strings.Repeat("c", 26), AccountID: "a", Mode: domain.ModeTest,
		Amount: 100, Currency: "EUR", Methods: []domain.Method{domain.MethodMBWay}, Metadata: map[string]any{"phone": "912345678"}, Now: now}); err == nil {
		t.Error("MBWAY accepted a phone that is not E.164")
	}
}
