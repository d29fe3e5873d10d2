package app

import (
	"context"
	"errors"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

var (
	// ErrNoProviderReference: the charge never reached a provider.
	ErrNoProviderReference = errors.New("TRANSACTION_HAS_NO_PROVIDER_REFERENCE")
	// ErrReceiptUnavailable: no receipt exists for an unsettled charge or
	// a provider without receipts.
	ErrReceiptUnavailable = errors.New("receipt unavailable")
)

// ProviderStatusResult is the provider-status answer.
type ProviderStatusResult struct {
	Charge      *domain.Charge
	Provider    string
	ProviderRef string
	Status      ports.ProviderStatus
}

// ProviderStatus reads the payment at its acquirer, bypassing any cache.
func (s *PaymentService) ProviderStatus(ctx context.Context, caller Caller, id string) (ProviderStatusResult, error) {
	c, err := s.charges.Get(ctx, caller, id)
	if err != nil {
		return ProviderStatusResult{}, err
	}
	name, ref := c.Provider()
	if ref == "" {
		return ProviderStatusResult{Charge: c}, ErrNoProviderReference
	}
	ra := s.acquirer.refunds
	if ra == nil {
		return ProviderStatusResult{Charge: c}, ErrNoProviderReference
	}
	st, err := ra.ChargeStatus(ctx, ref)
	if err != nil {
		return ProviderStatusResult{}, err
	}
	return ProviderStatusResult{Charge: c, Provider: name, ProviderRef: ref, Status: st}, nil
}

// Receipt returns the acquirer's PDF receipt of a settled payment.
func (s *PaymentService) Receipt(ctx context.Context, caller Caller, id string) ([]byte, error) {
	c, err := s.charges.Get(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	st := c.Settlement()
	ra := s.acquirer.refunds
	if st == nil || !c.Credited() || ra == nil {
		return nil, ErrReceiptUnavailable
	}
	_, ref := c.Provider()
	return ra.Receipt(ctx, ports.ReceiptRequest{ChargeID: c.ID(), ProviderRef: ref, Amount: c.Amount(), Currency: c.Currency(),
		PaidWith: st.PaidWith, PaidAt: st.PaidAt, EndToEndID: st.EndToEndID, Merchant: caller.Account.MerchantName})
}
