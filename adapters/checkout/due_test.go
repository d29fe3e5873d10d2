package checkout_test

import (
	"html"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

// A due-date charge's page shows what it asks today, not the original:
// its due date, the parts that make today's amount (the fine and
// interest of a late day), and the last day it can be paid instead of a
// countdown; in both languages.
func TestDueDatePageShowsTodaysAmount(t *testing.T) {
	raw := "duedatexxxxxxxxxxxxxxxxxxx"
	v := view(raw, domain.StatusPending)
	v.Amount = 10000
	v.ExpiresAt = time.Date(2027, 3, 2, 3, 0, 0, 0, time.UTC) // the end of 1 March in Brasília
	v.Due = &app.CheckoutDue{Date: bizdays.MustDate(2027, 1, 29), Today: &domain.DueBreakdown{
		Date: bizdays.MustDate(2027, 2, 10), AmountDue: 10240, Original: 10000, Fine: 200, Interest: 40}}
	closed := view("closedxxxxxxxxxxxxxxxxxxxx", domain.StatusPending)
	closed.Amount = 10000
	closed.Due = &app.CheckoutDue{Date: bizdays.MustDate(2027, 1, 29)}
	h := newHandler(&fakeSource{views: map[string]app.CheckoutView{raw: v, "closedxxxxxxxxxxxxxxxxxxxx": closed}})

	_, page := get(t, h, "/checkout/"+raw)
	pt := html.UnescapeString(page)
	for _, want := range []string{"R$ 102,40", "Vencimento", "29/01/2027", "Valor original", "R$ 100,00", "Multa", "+ R$ 2,00",
		"Juros", "+ R$ 0,40", "Pode ser paga até", "01/03/2027"} {
		if !strings.Contains(pt, want) {
			t.Errorf("the Portuguese page lacks %q", want)
		}
	}
	if strings.Contains(pt, `id="countdown"`) || strings.Contains(pt, "Desconto") {
		t.Error("a due-date page shows a countdown or a part that is zero")
	}
	_, en := get(t, h, "/checkout/"+raw+"?lang=en")
	for _, want := range []string{"Due", "Jan 29, 2027", "Fine", "Interest", "Amount to pay today", "Mar 1, 2027"} {
		if !strings.Contains(en, want) {
			t.Errorf("the English page lacks %q", want)
		}
	}
	// Past the last payable day nothing is asked any more: the original
	// stands, with the due date, and no breakdown.
	_, past := get(t, h, "/checkout/closedxxxxxxxxxxxxxxxxxxxx")
	if !strings.Contains(past, "29/01/2027") || strings.Contains(past, "Valor original") {
		t.Error("a closed due-date page shows a breakdown, or no due date")
	}
}
