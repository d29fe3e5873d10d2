package modes

import (
	"context"
	"fmt"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

var _ ports.RecurringAcquirer = (*Router)(nil)

// recurring picks the Pix Automático provider of s: the sandbox in test
// mode; in live mode the live provider when it has the capability, or
// ErrAcquirerNotConfigured.
func (r *Router) recurring(s ports.Scope) (ports.RecurringAcquirer, error) {
	if s.Mode != domain.ModeLive {
		return r.Test, nil
	}
	if ra, ok := r.Live.(ports.RecurringAcquirer); ok {
		return ra, nil
	}
	return nil, fmt.Errorf("%w: %s does not offer Pix Automático", ports.ErrAcquirerNotConfigured, r.Live.Name())
}

// CreateRecurrence implements ports.RecurringAcquirer.
func (r *Router) CreateRecurrence(ctx context.Context, req ports.CreateRecurrenceRequest) (*ports.Recurrence, error) {
	ra, err := r.recurring(req.Scope)
	if err != nil {
		return nil, err
	}
	return ra.CreateRecurrence(ctx, req)
}

// RequestAuthorization implements ports.RecurringAcquirer.
func (r *Router) RequestAuthorization(ctx context.Context, req ports.AuthorizationRequest) (*ports.AuthorizationRequestResult, error) {
	ra, err := r.recurring(req.Scope)
	if err != nil {
		return nil, err
	}
	return ra.RequestAuthorization(ctx, req)
}

// GetRecurrence implements ports.RecurringAcquirer.
func (r *Router) GetRecurrence(ctx context.Context, scope ports.Scope, recID string) (*ports.Recurrence, error) {
	ra, err := r.recurring(scope)
	if err != nil {
		return nil, err
	}
	return ra.GetRecurrence(ctx, scope, recID)
}

// CancelRecurrence implements ports.RecurringAcquirer.
func (r *Router) CancelRecurrence(ctx context.Context, req ports.CancelRecurrenceRequest) error {
	ra, err := r.recurring(req.Scope)
	if err != nil {
		return err
	}
	return ra.CancelRecurrence(ctx, req)
}

// CreateRecurringCharge implements ports.RecurringAcquirer.
func (r *Router) CreateRecurringCharge(ctx context.Context, req ports.RecurringChargeRequest) (*ports.RecurringCharge, error) {
	ra, err := r.recurring(req.Scope)
	if err != nil {
		return nil, err
	}
	return ra.CreateRecurringCharge(ctx, req)
}

// GetRecurringCharge implements ports.RecurringAcquirer.
func (r *Router) GetRecurringCharge(ctx context.Context, scope ports.Scope, txid string) (*ports.RecurringCharge, error) {
	ra, err := r.recurring(scope)
	if err != nil {
		return nil, err
	}
	return ra.GetRecurringCharge(ctx, scope, txid)
}

// RetryRecurringCharge implements ports.RecurringAcquirer.
func (r *Router) RetryRecurringCharge(ctx context.Context, req ports.RetryRecurringChargeRequest) (*ports.RecurringCharge, error) {
	ra, err := r.recurring(req.Scope)
	if err != nil {
		return nil, err
	}
	return ra.RetryRecurringCharge(ctx, req)
}

// CancelRecurringCharge implements ports.RecurringAcquirer.
func (r *Router) CancelRecurringCharge(ctx context.Context, req ports.CancelRecurringChargeRequest) error {
	ra, err := r.recurring(req.Scope)
	if err != nil {
		return err
	}
	return ra.CancelRecurringCharge(ctx, req)
}
