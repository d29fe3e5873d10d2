package domain_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/quitapix/quita/domain"
)

func eventSet(ts ...domain.EventType) []domain.EventType {
	out := slices.Clone(ts)
	slices.Sort(out)
	return out
}

func TestCreationEvents(t *testing.T) {
	t.Parallel()
	got := eventSet(domain.CreationEvents()...)
	want := eventSet(domain.EventChargeCreated, domain.EventPaymentCreated)
	if !slices.Equal(got, want) {
		t.Errorf("CreationEvents() = %v, want %v", got, want)
	}
}

// The rows follow the spec's emission rules and docs/design.md's "Charge life"
// table; payment.status_changed fires on every transaction-status change
// except opening a created charge (creation has its own events).
func TestTransitionEvents(t *testing.T) {
	t.Parallel()
	const (
		paid      = domain.EventChargePaid
		failed    = domain.EventChargeFailed
		expired   = domain.EventChargeExpired
		refunded  = domain.EventChargeRefunded
		disputed  = domain.EventChargeDisputed
		completed = domain.EventPaymentCompleted
		pFailed   = domain.EventPaymentFailed
		pExpired  = domain.EventPaymentExpired
		pRefunded = domain.EventPaymentRefunded
		changed   = domain.EventPaymentStatusChanged
	)
	tests := []struct {
		name     string
		from, to domain.TxStatus
		want     []domain.EventType
	}{
		{"pix paid, lock ok", domain.TxWaitingPayment, domain.TxPaid, []domain.EventType{paid, completed, changed}},
		{"paid before the charge opened", domain.TxPending, domain.TxPaid, []domain.EventType{paid, completed, changed}},
		{"card approved", domain.TxProcessing, domain.TxApproved, []domain.EventType{paid, completed, changed}},
		{"held payment released", domain.TxProcessing, domain.TxPaid, []domain.EventType{paid, completed, changed}},
		{"paid by another document", domain.TxWaitingPayment, domain.TxRefunded, []domain.EventType{refunded, pRefunded, changed}},
		{"undisclosed payer held for review", domain.TxWaitingPayment, domain.TxProcessing, []domain.EventType{changed}},
		{"expired", domain.TxWaitingPayment, domain.TxExpired, []domain.EventType{expired, pExpired, pFailed, changed}},
		{"expired before opening", domain.TxPending, domain.TxExpired, []domain.EventType{expired, pExpired, pFailed, changed}},
		{"cancelled", domain.TxWaitingPayment, domain.TxCancelled, []domain.EventType{failed, pFailed, changed}},
		{"cancelled in review", domain.TxProcessing, domain.TxCancelled, []domain.EventType{failed, pFailed, changed}},
		{"refused by the acquirer", domain.TxPending, domain.TxRefused, []domain.EventType{failed, pFailed, changed}},
		{"card declined", domain.TxProcessing, domain.TxRefused, []domain.EventType{failed, pFailed, changed}},
		{"refunded in full", domain.TxPaid, domain.TxRefunded, []domain.EventType{refunded, pRefunded, changed}},
		{"card refunded in full", domain.TxApproved, domain.TxRefunded, []domain.EventType{refunded, pRefunded, changed}},
		{"chargeback", domain.TxApproved, domain.TxChargeback, []domain.EventType{disputed, pFailed, changed}},
		{"dispute opened", domain.TxApproved, domain.TxDispute, []domain.EventType{disputed, pFailed, changed}},
		{"dispute on a boleto", domain.TxPaid, domain.TxDispute, []domain.EventType{disputed, pFailed, changed}},
		// Already disputed: no second charge.disputed, but the legacy
		// family still reports the failure (rule 2).
		{"dispute lost", domain.TxDispute, domain.TxChargeback, []domain.EventType{pFailed, changed}},
		// The charge was already paid (and fulfilled) before the dispute, so
		// winning it does not announce a second payment.
		{"dispute won", domain.TxDispute, domain.TxApproved, []domain.EventType{changed}},
		{"opened after create", domain.TxPending, domain.TxWaitingPayment, nil},
		{"no change", domain.TxPaid, domain.TxPaid, nil},
		{"no change while open", domain.TxWaitingPayment, domain.TxWaitingPayment, nil},
	}
	for _, tt := range tests {
		got := eventSet(domain.TransitionEvents(tt.from, tt.to)...)
		if want := eventSet(tt.want...); !slices.Equal(got, want) {
			t.Errorf("%s: TransitionEvents(%s, %s) = %v, want %v", tt.name, tt.from, tt.to, got, want)
		}
	}
}

// Every allowed transition obeys the spec's emission rules.
func TestTransitionEventsRules(t *testing.T) {
	t.Parallel()
	failedFamily := []domain.TxStatus{domain.TxRefused, domain.TxCancelled, domain.TxExpired, domain.TxChargeback, domain.TxDispute}
	for _, from := range domain.TxStatuses {
		for _, to := range domain.TxStatuses {
			if !domain.CanTransition(from, to) {
				continue
			}
			got := domain.TransitionEvents(from, to)
			name := fmt.Sprintf("%s→%s %v", from, to, got)
			seen := map[domain.EventType]bool{}
			for _, e := range got {
				if seen[e] {
					t.Errorf("%s: %s emitted twice", name, e)
				}
				seen[e] = true
				if !domain.KnownEvent(e) {
					t.Errorf("%s: %s is not in the event catalog", name, e)
				}
			}
			if !(from == domain.TxPending && to == domain.TxWaitingPayment) && !seen[domain.EventPaymentStatusChanged] {
				t.Errorf("%s: no payment.status_changed", name)
			}
			// Rule 1: payment.completed and charge.paid fire together, only
			// for PAID/APPROVED.
			if seen[domain.EventChargePaid] != seen[domain.EventPaymentCompleted] {
				t.Errorf("%s: charge.paid and payment.completed disagree", name)
			}
			if seen[domain.EventChargePaid] && !to.Settled() {
				t.Errorf("%s: charge.paid for a status that is not settled", name)
			}
			if to.Settled() && !from.Settled() && from != domain.TxDispute && !seen[domain.EventChargePaid] {
				t.Errorf("%s: settling emits no charge.paid", name)
			}
			// Rule 2: payment.failed for the failure family, split by outcome
			// among charge.failed / charge.expired / charge.disputed.
			inFamily := slices.Contains(failedFamily, to)
			if seen[domain.EventPaymentFailed] != inFamily {
				t.Errorf("%s: payment.failed = %v, want %v", name, seen[domain.EventPaymentFailed], inFamily)
			}
			canonical := 0
			for _, e := range []domain.EventType{domain.EventChargeFailed, domain.EventChargeExpired, domain.EventChargeDisputed} {
				if seen[e] {
					canonical++
				}
			}
			if inFamily && from != domain.TxDispute && canonical != 1 {
				t.Errorf("%s: %d canonical failure events, want exactly 1", name, canonical)
			}
			if !inFamily && canonical != 0 {
				t.Errorf("%s: canonical failure event outside the failure family", name)
			}
			if seen[domain.EventChargeExpired] != (to == domain.TxExpired) {
				t.Errorf("%s: charge.expired = %v", name, seen[domain.EventChargeExpired])
			}
			if seen[domain.EventPaymentRefunded] != (to == domain.TxRefunded) || seen[domain.EventChargeRefunded] != (to == domain.TxRefunded) {
				t.Errorf("%s: refunded events do not match the REFUNDED target", name)
			}
		}
	}
}

func TestEventTypeLegacyAndCatalog(t *testing.T) {
	t.Parallel()
	specCanonical := []domain.EventType{"charge.created", "charge.paid", "charge.failed", "charge.expired", "payout.created", "payout.paid", "payout.failed"}
	specLegacy := []domain.EventType{"payment.created", "payment.completed", "payment.failed", "payment.expired", "payment.refunded", "withdrawal.completed", "payment.status_changed", "withdrawal.status_changed"}
	for _, e := range specCanonical {
		if !domain.KnownEvent(e) || e.Legacy() {
			t.Errorf("%s: known %v legacy %v, want known canonical", e, domain.KnownEvent(e), e.Legacy())
		}
	}
	for _, e := range specLegacy {
		if !domain.KnownEvent(e) || !e.Legacy() {
			t.Errorf("%s: known %v legacy %v, want known legacy", e, domain.KnownEvent(e), e.Legacy())
		}
	}
	for _, d := range domain.EventCatalog {
		if d.Legacy != d.Event.Legacy() {
			t.Errorf("catalog entry %s flagged legacy=%v, but Legacy() = %v", d.Event, d.Legacy, d.Event.Legacy())
		}
	}
	if domain.KnownEvent("charge.settled") || domain.KnownEvent("") {
		t.Error("KnownEvent accepts a name outside the catalog")
	}
}
