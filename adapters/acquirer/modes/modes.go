// Package modes routes acquirer calls by mode: test-mode charges always go
// to the sandbox, live-mode charges to the configured provider (API Pix).
// Calls that carry only a provider reference go to the provider whose
// prefix the reference has.
package modes

import (
	"context"
	"fmt"
	"strings"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// Provider is what a live provider implements.
type Provider interface {
	ports.Acquirer
	ports.RefundAcquirer
}

// Sandbox is what the test-mode acquirer implements.
type Sandbox interface {
	Provider
	ports.MethodAcquirer
	ports.PixSender
	ports.RecurringAcquirer
}

// Router is an acquirer that sends test mode to Test and live mode to Live.
type Router struct {
	Test Sandbox
	Live Provider
}

var (
	_ ports.Acquirer       = (*Router)(nil)
	_ ports.RefundAcquirer = (*Router)(nil)
	_ ports.MethodAcquirer = (*Router)(nil)
	_ ports.PixSender      = (*Router)(nil)
)

func (r *Router) pick(s ports.Scope) Provider {
	if s.Mode == domain.ModeLive {
		return r.Live
	}
	return r.Test
}

// byRef picks the provider whose references start with its name.
func (r *Router) byRef(ref string) Provider {
	if strings.HasPrefix(ref, r.Live.Name()+":") {
		return r.Live
	}
	return r.Test
}

// Name is the live provider's name (the name charges are created with is
// the one of the provider that created them; see CreatePixCharge).
func (r *Router) Name() string { return r.Live.Name() }

// CreatePixCharge implements ports.Acquirer.
func (r *Router) CreatePixCharge(ctx context.Context, req ports.CreatePixChargeRequest) (*ports.CreatePixChargeResponse, error) {
	return r.pick(req.Scope).CreatePixCharge(ctx, req)
}

// CancelPixCharge implements ports.Acquirer.
func (r *Router) CancelPixCharge(ctx context.Context, req ports.CancelPixChargeRequest) error {
	return r.pick(req.Scope).CancelPixCharge(ctx, req)
}

// ReturnPix implements ports.Acquirer.
func (r *Router) ReturnPix(ctx context.Context, req ports.ReturnPixRequest) (*ports.ReturnPixResponse, error) {
	return r.pick(req.Scope).ReturnPix(ctx, req)
}

// ReturnPixStatus implements ports.Acquirer.
func (r *Router) ReturnPixStatus(ctx context.Context, req ports.ReturnPixStatusRequest) (*ports.ReturnPixResponse, error) {
	return r.pick(req.Scope).ReturnPixStatus(ctx, req)
}

// Refund implements ports.RefundAcquirer.
func (r *Router) Refund(ctx context.Context, req ports.RefundRequest) (string, error) {
	return r.pick(req.Scope).Refund(ctx, req)
}

// RefundStatus implements ports.RefundAcquirer.
func (r *Router) RefundStatus(ctx context.Context, providerRef string) (string, error) {
	return r.byRef(providerRef).RefundStatus(ctx, providerRef)
}

// ChargeStatus implements ports.RefundAcquirer.
func (r *Router) ChargeStatus(ctx context.Context, providerRef string) (ports.ProviderStatus, error) {
	return r.byRef(providerRef).ChargeStatus(ctx, providerRef)
}

// CreatePaymentMethods implements ports.MethodAcquirer: only test mode
// offers methods other than Pix.
func (r *Router) CreatePaymentMethods(ctx context.Context, req ports.CreateMethodsRequest) (domain.MethodDetails, error) {
	if req.Mode == domain.ModeLive {
		if m, ok := r.Live.(ports.MethodAcquirer); ok {
			return m.CreatePaymentMethods(ctx, req)
		}
		return domain.MethodDetails{}, fmt.Errorf("%w: the %s provider supports only pix", ports.ErrAcquirerRejected, r.Live.Name())
	}
	return r.Test.CreatePaymentMethods(ctx, req)
}

// NameFor implements ports.ScopedNamer.
func (r *Router) NameFor(s ports.Scope) string { return r.pick(s).Name() }

// SupportsCashout implements ports.CashoutSupport for the provider of s.
func (r *Router) SupportsCashout(s ports.Scope) bool { return ports.SupportsCashout(r.pick(s), s) }

// SupportsDueDate implements ports.DueDateSupport for the provider of s.
func (r *Router) SupportsDueDate(s ports.Scope) bool { return ports.SupportsDueDate(r.pick(s), s) }

var (
	_ ports.DueDateSupport = (*Router)(nil)
	_ ports.DueDateBatcher = (*Router)(nil)
)

// SupportsDueDateBatches implements ports.DueDateBatcher for the provider
// of s.
func (r *Router) SupportsDueDateBatches(s ports.Scope) bool {
	_, ok := ports.DueDateBatches(r.pick(s), s)
	return ok
}

// OpenDueDateBatch implements ports.DueDateBatcher.
func (r *Router) OpenDueDateBatch(ctx context.Context, req ports.DueDateBatchRequest) error {
	b, ok := ports.DueDateBatches(r.pick(req.Scope), req.Scope)
	if !ok {
		return fmt.Errorf("%w: the %s provider opens due-date charges one by one", ports.ErrAcquirerNotConfigured, r.pick(req.Scope).Name())
	}
	return b.OpenDueDateBatch(ctx, req)
}

// DueDateBatchStatus implements ports.DueDateBatcher.
func (r *Router) DueDateBatchStatus(ctx context.Context, scope ports.Scope, batchID string) ([]ports.DueDateBatchItem, error) {
	b, ok := ports.DueDateBatches(r.pick(scope), scope)
	if !ok {
		return nil, fmt.Errorf("%w: the %s provider opens due-date charges one by one", ports.ErrAcquirerNotConfigured, r.pick(scope).Name())
	}
	return b.DueDateBatchStatus(ctx, scope, batchID)
}

// SendPix implements ports.PixSender: test mode sends through the
// sandbox, live mode through the live provider when it can send Pix.
func (r *Router) SendPix(ctx context.Context, req ports.PixSendRequest) (ports.PixSendResult, error) {
	s, err := r.sender(req.Scope)
	if err != nil {
		return ports.PixSendResult{}, err
	}
	return s.SendPix(ctx, req)
}

// PixSendStatus implements ports.PixSender.
func (r *Router) PixSendStatus(ctx context.Context, scope ports.Scope, sendID string) (ports.PixSendResult, error) {
	s, err := r.sender(scope)
	if err != nil {
		return ports.PixSendResult{}, err
	}
	return s.PixSendStatus(ctx, scope, sendID)
}

func (r *Router) sender(s ports.Scope) (ports.PixSender, error) {
	if s.Mode != domain.ModeLive {
		return r.Test, nil
	}
	if ps, ok := r.Live.(ports.PixSender); ok {
		return ps, nil
	}
	return nil, fmt.Errorf("%w: %s cannot send Pix", ports.ErrAcquirerNotConfigured, r.Live.Name())
}
