package bcbpix_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

// A live due-date charge paid early through the PSP settles for the
// discounted amount (the payer's bank asked the PSP the amount due on its
// day), credits the merchant its net and gives no overdue notice; after
// its last payable day the PSP refuses to be paid at all.
func TestLiveDueDateChargePaidEarlyAndClosedThroughPixsim(t *testing.T) {
	t.Parallel()
	w := newWorld(t, backends[1].dsn(t))
	brasilia, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	today := bizdays.DateOf(time.Now().In(brasilia))
	due := bizdays.NextBusinessDay(today.AddDays(10))
	body := map[string]any{"amount": 10000, "payment_method": "pix",
		"customer": map[string]any{"name": "Joao Souza", "document": expectedDoc},
		"due_date": due.String(), "days_after_due": 2,
		"fine":     map[string]any{"type": "percent", "rate": "2.00"},
		"discount": map[string]any{"type": "fixed_until", "until": []any{map[string]any{"date": today.AddDays(5).String(), "amount": 500}}}}
	early := w.create(t, body)
	p := w.pay(t, pixsim.PayRequest{TxID: early.Pix.TxID, PayerTaxID: expectedDoc, Date: today.AddDays(1).String()})
	if p.Valor != "95.00" {
		t.Fatalf("paid %s early, want 100.00 less the 5.00 discount", p.Valor)
	}
	got := w.get(t, early.ID)
	if got.Status != "paid" {
		t.Fatalf("after the callback the charge is %q, want paid", got.Status)
	}
	if n := w.events(t, early.ID, domain.EventChargePaid); n != 1 {
		t.Errorf("%d charge.paid events, want 1", n)
	}
	if problems, err := w.app.DB.VerifyDerived(context.Background()); err != nil || len(problems) > 0 {
		t.Errorf("ledger verify: %v %v", problems, err)
	}

	closed := w.create(t, body)
	last := bizdays.NextBusinessDay(due.AddDays(2))
	_, err = w.sim.Pay(context.Background(), pixsim.PayRequest{TxID: closed.Pix.TxID, PayerTaxID: expectedDoc, Date: last.AddDays(1).String()})
	if !errors.Is(err, pixsim.ErrCobVClosed) {
		t.Fatalf("paying the day after the last payable day: %v, want the PSP to refuse it", err)
	}
	p = w.pay(t, pixsim.PayRequest{TxID: closed.Pix.TxID, PayerTaxID: expectedDoc, Date: last.String()})
	if p.Valor != "102.00" {
		t.Errorf("paid %s on the last payable day, want 100.00 + 2 %% fine", p.Valor)
	}
}
