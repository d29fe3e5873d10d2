package modes

import (
	"context"
	"fmt"

	"github.com/quitapix/quita/ports"
)

var _ ports.DueDateReviser = (*Router)(nil)

// ReviseDueCharge implements ports.DueDateReviser with the provider of
// the request's mode; a provider that cannot revise refuses it as not
// configured for it.
func (r *Router) ReviseDueCharge(ctx context.Context, req ports.ReviseDueChargeRequest) error {
	p := r.pick(req.Scope)
	rv, ok := p.(ports.DueDateReviser)
	if !ok {
		return fmt.Errorf("%w: %s cannot revise due-date charges", ports.ErrAcquirerNotConfigured, p.Name())
	}
	return rv.ReviseDueCharge(ctx, req)
}
