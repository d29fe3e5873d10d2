package app_test

import (
	"errors"
	"testing"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
)

// An acquirer that does not declare ports.DueDateSupport (the harness's
// moq acquirer, like bcbpix until it opens cobv) cannot open a due-date
// charge: the create is refused after validation and before any call to
// the acquirer, and nothing is stored. A request the domain refuses is
// still its 400, not the capability's refusal.
func TestDueDateCreateNeedsAnAcquirerThatSupportsIt(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	in := app.CreateChargeInput{Amount: 10_000, Currency: "BRL", StrictDocument: true,
		Customer: domain.Customer{Name: "Maria Silva", Document: "52998224725"},
		Due:      &domain.DueTermsParams{Due: domain.BrasiliaDate(t0).AddDays(10)}}
	_, err := h.create(t, in, "due-date-unsupported-1")
	if !errors.Is(err, app.ErrDueDateNotSupported) {
		t.Fatalf("Create: %v, want ErrDueDateNotSupported", err)
	}
	if n := len(h.acquirer.CreatePixChargeCalls()); n != 0 {
		t.Errorf("the acquirer was asked for %d cobs", n)
	}
	if n := len(h.store.CreateChargeCalls()); n != 0 {
		t.Errorf("%d charges were stored", n)
	}

	in.Customer.Document = ""
	var ve *domain.ValidationError
	if _, err := h.create(t, in, "due-date-unsupported-2"); !errors.As(err, &ve) || ve.Field != domain.FieldCustomerDocument {
		t.Errorf("Create without customer.document: %v, want its validation error", err)
	}
}
