package dashboard

import (
	"strings"
	"testing"

	"github.com/quitapix/quita/domain"
)

// The events pages name every charge and subscription event of the
// catalog in both languages, never by its raw type.
func TestEventLabelsCoverChargesAndSubscriptions(t *testing.T) {
	t.Parallel()
	for _, d := range domain.EventCatalog {
		if !strings.HasPrefix(string(d.Event), "charge.") && !strings.HasPrefix(string(d.Event), "subscription.") {
			continue
		}
		for _, lang := range []string{langPT, langEN} {
			if got := eventLabel(d.Event, lang); got == string(d.Event) || got == "" {
				t.Errorf("%s has no %s label", d.Event, lang)
			}
		}
	}
}
