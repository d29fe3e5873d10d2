package domain_test

import (
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

// Each attempt of a return has its own devolução id, derived from the
// end-to-end id (the same on every retry of that attempt), within API Pix's
// [a-zA-Z0-9]{1,35}; attempt 1 keeps the id used before attempts existed.
func TestReturnAttemptID(t *testing.T) {
	t.Parallel()
	valid := regexp.MustCompile(`^[a-zA-Z0-9]{1,35}$`)
	if got, want := domain.ReturnAttemptID(chargeE2E, 1), "D"+chargeE2E[1:]; got != want {
		t.Errorf("attempt 1 = %q, want %q", got, want)
	}
	seen := map[string]bool{}
	for n := 1; n <= domain.MaxReturnAttemptIDs; n++ {
		id := domain.ReturnAttemptID(chargeE2E, n)
		if !valid.MatchString(id) || seen[id] || id != domain.ReturnAttemptID(chargeE2E, n) {
			t.Errorf("attempt %d id %q: invalid, repeated or not derived", n, id)
		}
		seen[id] = true
	}
}

func TestPixReturnSteps(t *testing.T) {
	t.Parallel()
	c := chargeOpen(t, "")
	if _, err := domain.NewPixReturn(c, "not-an-e2e", 100, domain.ReturnForWrongAmount, chargeT0); err == nil {
		t.Error("NewPixReturn accepted a malformed end-to-end id")
	}
	r, err := domain.NewPixReturn(c, chargeE2E, 100, domain.ReturnForWrongAmount, chargeT0)
	if err != nil || r.Status != domain.PixReturnRequested || r.Attempt != 1 || r.ChargeID != c.ID() {
		t.Fatalf("NewPixReturn = %+v, %v", r, err)
	}
	if err := r.Confirm(chargeT0); !errors.Is(err, domain.ErrInvalidTransition) {
		t.Errorf("Confirm before Accept = %v", err)
	}
	at, due := chargeT0.Add(time.Minute), chargeT0.Add(2*time.Minute)
	for n := 1; n <= 3; n++ {
		if err := r.Accept("ref", at, due); err != nil || r.Status != domain.PixReturnInProgress {
			t.Fatalf("Accept attempt %d: %v %+v", n, err, r)
		}
		if err := r.Refuse("recusada", 3, at, due); err != nil {
			t.Fatal(err)
		}
		if n < 3 && (r.Status != domain.PixReturnRequested || r.Attempt != n+1 || !r.DueAt.Equal(due) || r.ProviderRef != "") {
			t.Fatalf("after refusal %d: %+v", n, r)
		}
	}
	if r.Status != domain.PixReturnFailed || r.Attempt != 3 || r.Failure != "recusada" || !r.Status.Final() {
		t.Fatalf("after the last refusal: %+v", r)
	}
	if err := r.Accept("ref", at, due); !errors.Is(err, domain.ErrInvalidTransition) {
		t.Errorf("Accept after FAILED = %v", err)
	}
	ok, _ := domain.NewPixReturn(c, chargeE2E, 100, domain.ReturnForWrongAmount, chargeT0)
	if err := ok.Accept("ref", at, due); err != nil {
		t.Fatal(err)
	}
	if err := ok.Confirm(at); err != nil || ok.Status != domain.PixReturnReturned || !ok.DueAt.IsZero() {
		t.Errorf("Confirm: %v %+v", err, ok)
	}
	// Postpone moves only the due time of an open return.
	later := chargeT0.Add(time.Hour)
	open, _ := domain.NewPixReturn(c, chargeE2E, 100, domain.ReturnForWrongAmount, chargeT0)
	before := open
	if err := open.Postpone(later); err != nil || !open.DueAt.Equal(later) {
		t.Fatalf("Postpone: %v %+v", err, open)
	}
	open.DueAt = before.DueAt
	if open != before {
		t.Errorf("Postpone changed more than the due time: %+v, was %+v", open, before)
	}
	if err := ok.Postpone(later); !errors.Is(err, domain.ErrInvalidTransition) {
		t.Errorf("Postpone of a RETURNED return = %v", err)
	}
}
