package sandbox

import (
	"context"

	"github.com/quitapix/quita/ports"
)

var _ ports.DueDateReviser = (*Acquirer)(nil)

// ReviseDueCharge implements ports.DueDateReviser: the sandbox's cob is
// the charge itself, whose payments are settled against its terms as
// stored, so a revision has nothing to change here beyond the round trip.
func (a *Acquirer) ReviseDueCharge(ctx context.Context, _ ports.ReviseDueChargeRequest) error {
	return a.call(ctx)
}
