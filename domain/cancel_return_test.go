package domain_test

import (
	"time"

	"testing"

	"github.com/quitapix/quita/domain"
)

// A charge held for review holds the payer's money: cancelling it must
// request the return of that money, and cancelling an unpaid charge must not.
func TestCancelHeldForReviewRequestsReturn(t *testing.T) {
	t.Parallel()
	held := chargeOpen(t, "52998224725")
	out, err := held.SettlePix(chargePayment(""), chargePixFees)
	if err != nil || out != domain.OutcomeHeldForReview {
		t.Fatalf("settle: %v %v", out, err)
	}
	if err := held.Cancel(chargeT0.Add(time.Hour / 2)); err != nil {
		t.Fatal(err)
	}
	if held.Status() != domain.TxCancelled || held.ReturnState() != domain.ReturnRequested {
		t.Fatalf("held charge cancelled: status %s, return %q; want CANCELLED with a return requested", held.Status(), held.ReturnState())
	}

	unpaid := chargeOpen(t, "")
	if err := unpaid.Cancel(chargeT0); err != nil {
		t.Fatal(err)
	}
	if unpaid.ReturnState() != domain.ReturnNone {
		t.Fatalf("unpaid charge cancelled with return %q", unpaid.ReturnState())
	}
}
