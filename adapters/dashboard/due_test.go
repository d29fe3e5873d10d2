package dashboard_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/quitatest"
)

// The charge list shows a due-date charge's due date and marks it overdue
// once the day after it starts in Brasília; the charge page shows what a
// late payment was made of and its net from the amount paid.
func TestDueDateChargesInTheDashboard(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	m := newMerchant(t, srv, "Escola Aurora")
	today := domain.BrasiliaDate(srv.Clock.Now())
	due := today.AddDays(10)
	body := map[string]any{"amount": 50000, "payment_method": "pix", "due_date": due.String(),
		"customer": map[string]any{"name": "Maria da Silva", "document": "529.982.247-25"},
		"fine":     map[string]any{"type": "fixed", "amount": 1000},
		"interest": map[string]any{"type": "amount_per_day", "amount": 50}}
	open := apiCall(t, srv, http.MethodPost, "/charges", m.TestKey, body, http.StatusCreated)
	late := apiCall(t, srv, http.MethodPost, "/charges", m.TestKey, body, http.StatusCreated)
	b := newBrowser(t, srv)
	b.login(m)
	dueText := time.Date(due.Year(), due.Month(), due.Day(), 0, 0, 0, 0, time.UTC).Format("02/01/2006")

	list := b.get("/dashboard/test/charges")
	if !strings.Contains(list.Body, "Vence em "+dueText) || strings.Contains(list.Body, "data-overdue") {
		t.Fatalf("before the due date the list must show it and mark nothing overdue:\n%.4000s", list.Body)
	}
	effDue := bizdays.NextBusinessDay(due)
	srv.Advance(t, domain.EndOfBrasiliaDay(effDue).Sub(srv.Clock.Now())+time.Hour)
	apiCall(t, srv, http.MethodPost, "/test_helpers/charges/"+late.ID+"/pay", m.TestKey, map[string]any{}, http.StatusOK)
	b = newBrowser(t, srv) // the session ended while the days passed
	b.login(m)

	list = b.get("/dashboard/test/charges")
	if n := strings.Count(list.Body, "data-overdue"); n != 1 {
		t.Fatalf("after the due date %d charges marked overdue, want the unpaid one:\n%s", n, list.Body)
	}
	row := list.Body[strings.Index(list.Body, `data-id="`+open.ID+`"`):]
	if !strings.Contains(row[:strings.Index(row, "</tr>")], "Vencida") {
		t.Errorf("the unpaid charge's row is not marked Vencida: %.800s", row)
	}
	page := b.get("/dashboard/test/charges/" + late.ID)
	paidOn := domain.BrasiliaDate(srv.Clock.Now())
	days := int64(civil(paidOn).Sub(civil(effDue)) / (24 * time.Hour))
	paid := 50000 + 1000 + 50*days
	for _, want := range []string{"Valor pago", "multa +R$ 10,00", "juros +R$ " + money(50*days), "R$ " + money(paid)} {
		if !strings.Contains(page.Body, want) {
			t.Errorf("the paid charge's page lacks %q", want)
		}
	}
	if ev := b.get("/dashboard/test/charges/" + open.ID); !strings.Contains(ev.Body, "Cobrança vencida") {
		t.Error("the unpaid charge's timeline lacks its charge.overdue")
	}
}

// money is centavos as the pt-BR pages write them (below R$ 1.000,00),
// without the currency.
func money(c int64) string { return fmt.Sprintf("%d,%02d", c/100, c%100) }

func civil(d bizdays.Date) time.Time {
	return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
}
