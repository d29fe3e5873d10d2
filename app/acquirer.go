package app

import "github.com/quitapix/quita/ports"

// acquirer is the configured ports.Acquirer with its optional
// capabilities, decided once when a service is wired: this is the one
// place app asks what an acquirer can do.
type acquirer struct {
	ports.Acquirer
	// methods creates the data of methods other than Pix; nil when the
	// acquirer collects Pix only.
	methods ports.MethodAcquirer
	// refunds sends refunds and reads live status and receipts; nil when
	// the acquirer has none of these.
	refunds ports.RefundAcquirer
	// sender sends Pix out to a key (payouts); nil when the acquirer
	// cannot.
	sender ports.PixSender
	// reviser revises due-date charges' terms; nil when the acquirer
	// cannot.
	reviser ports.DueDateReviser
	// recurring runs Pix Automático (subscriptions); nil when the
	// acquirer cannot.
	recurring ports.RecurringAcquirer
}

func acquirerOf(a ports.Acquirer) acquirer {
	out := acquirer{Acquirer: a}
	out.methods, _ = a.(ports.MethodAcquirer)
	out.refunds, _ = a.(ports.RefundAcquirer)
	out.sender, _ = a.(ports.PixSender)
	out.reviser, _ = a.(ports.DueDateReviser)
	out.recurring, _ = a.(ports.RecurringAcquirer)
	return out
}

// nameFor is the name of the provider that serves scope, kept with each
// charge.
func (a acquirer) nameFor(scope ports.Scope) string {
	return ports.ProviderName(a.Acquirer, scope)
}

// supportsCashout reports whether refunds in scope may go out as a new
// Pix to a key.
func (a acquirer) supportsCashout(scope ports.Scope) bool {
	return ports.SupportsCashout(a.Acquirer, scope)
}

// supportsDueDate reports whether due-date charges in scope can be opened
// at the acquirer.
func (a acquirer) supportsDueDate(scope ports.Scope) bool {
	return ports.SupportsDueDate(a.Acquirer, scope)
}
