package app

import (
	"context"
	"errors"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// ErrNoProviderReference: the charge never reached a provider.
var ErrNoProviderReference = errors.New("TRANSACTION_HAS_NO_PROVIDER_REFERENCE")

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
