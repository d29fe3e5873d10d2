package dashboard

import (
	"html/template"
	"strings"

	"github.com/quitapix/quita/domain"
)

// subaccountFuncs are the template functions of the sub-account pages and
// a charge's splits (render.go adds them to funcs before the templates are
// parsed).
var subaccountFuncs = template.FuncMap{
	"stateClass": stateClass,
	// pct is a split's percent ("12.50") as the page's language writes it.
	"pct": func(p string, lang string) string {
		if lang != langEN {
			p = strings.Replace(p, ".", ",", 1)
		}
		return p + "%"
	},
}

// stateClass is the badge colour of a sub-account's, an invitation's or a
// split's status (their wire values).
func stateClass(st string) string {
	switch st {
	case domain.SubaccountActive, domain.InvitationAccepted, domain.SplitPaid:
		return "ok"
	case domain.SubaccountDisabled, domain.InvitationExpired, domain.SplitCancelled:
		return "off"
	}
	return "wait"
}
