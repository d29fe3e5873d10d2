package httpapi

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// Security item 23: the store's IN list names each type once, in the
// order first named, however the entries and families overlap.
func TestEventTypeFilterKeepsEachTypeOnce(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest("GET", "/v1/events?type=charge.paid,+charge.*,charge.paid,payment.created,charge.*", nil)
	q, _, err := parseEventQuery(r, ports.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	want := []domain.EventType{domain.EventChargePaid}
	for _, d := range domain.EventCatalog {
		if d.Event != domain.EventChargePaid && strings.HasPrefix(string(d.Event), "charge.") {
			want = append(want, d.Event)
		}
	}
	want = append(want, domain.EventPaymentCreated)
	if !slices.Equal(q.Types, want) {
		t.Fatalf("types = %v, want %v", q.Types, want)
	}
}
