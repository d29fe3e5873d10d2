package ports

import "context"

// RecurringNotifications takes what an acquirer reports, unasked, about
// Pix Automático: a mandate (rec) or a cycle's charge (cobr) that
// changed. Each value is read back from the acquirer, never taken from a
// callback's body. A change may be reported more than once and out of
// order: a receiver applies only what moves the subscription forward. An
// error makes the acquirer report it again later.
type RecurringNotifications interface {
	OnRecurrence(ctx context.Context, scope Scope, rec Recurrence) error
	OnRecurringCharge(ctx context.Context, scope Scope, charge RecurringCharge) error
}
