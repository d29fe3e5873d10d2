package ports

import (
	"context"
	"fmt"
)

// RecurringNotifications takes what an acquirer reports, unasked, about
// Pix Automático: a mandate (rec) or a cycle's charge (cobr) that
// changed. Each value is read back from the acquirer, never taken from a
// callback's body. A change may be reported more than once and out of
// order: a receiver applies only what moves the subscription forward.
// ErrNotFound says the rec or cobr is none of the scope's: the acquirer
// counts it ignored. Any other error makes the acquirer report it again
// later.
type RecurringNotifications interface {
	OnRecurrence(ctx context.Context, scope Scope, rec Recurrence) error
	OnRecurringCharge(ctx context.Context, scope Scope, charge RecurringCharge) error
}

// ErrMalformedCallback: a callback's body is not what the provider's API
// defines; sending it again will not help. It wraps ErrAcquirerRejected.
var ErrMalformedCallback = fmt.Errorf("%w: malformed callback body", ErrAcquirerRejected)
