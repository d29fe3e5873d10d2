package bcbpix_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain/bizdays"
)

// A live due-date charge is a cobv at the PSP: its BR Code is the cobv's;
// a payer's bank paying late pays the amount due that day (fine and
// interest), the callback settles the charge with it, and the wallet is
// credited what was paid; the payer who pays the original amount late
// pays the wrong amount, which is returned.
func TestLiveDueDateChargeThroughPixsim(t *testing.T) {
	t.Parallel()
	w := newWorld(t, backends[0].dsn(t))
	brasilia, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	due := bizdays.NextBusinessDay(bizdays.DateOf(time.Now().In(brasilia)).AddDays(10))
	body := map[string]any{"amount": 10000, "payment_method": "pix",
		"customer": map[string]any{"name": "Joao Souza", "document": expectedDoc},
		"due_date": due.String(), "days_after_due": 15,
		"fine":     map[string]any{"type": "fixed", "amount": 200},
		"interest": map[string]any{"type": "amount_per_day", "amount": 10}}
	c := w.create(t, body)
	cob, ok := w.sim.CobVByTxID(c.Pix.TxID)
	if !ok || cob.Status != pixsim.CobActive || cob.PixCopiaECola != c.Pix.BRCode || cob.Valor.Multa == nil ||
		cob.Calendario.DataDeVencimento != due.String() || cob.Devedor.Nome != "Joao Souza" {
		t.Fatalf("the PSP's cobv %+v for charge %+v", cob, c)
	}
	// Three days after the due date: 100.00 + fine 2.00 + 3 × 0.10.
	late := due.AddDays(3)
	p := w.pay(t, pixsim.PayRequest{TxID: c.Pix.TxID, PayerTaxID: expectedDoc, Date: late.String()})
	if p.Valor != "102.30" {
		t.Fatalf("paid %s, want the amount due on %s, 102.30", p.Valor, late)
	}
	code, raw := w.do(t, w.acct.LiveKey, http.MethodGet, "/charges/"+c.ID, nil, "")
	var got struct {
		Status string `json:"status"`
		Paid   struct {
			Amount int64 `json:"amount"`
			Fine   int64 `json:"fine"`
		} `json:"paid"`
	}
	if err := json.Unmarshal(raw, &got); err != nil || code != 200 || got.Status != "paid" || got.Paid.Amount != 10230 || got.Paid.Fine != 200 {
		t.Fatalf("after the callback: %d %s", code, raw)
	}

	// The original amount paid late is the wrong amount: returned.
	c2 := w.create(t, body)
	p2 := w.pay(t, pixsim.PayRequest{TxID: c2.Pix.TxID, PayerTaxID: expectedDoc, Date: late.String(), Amount: 10000})
	w.runReturns(t, 1)
	if rets := w.sim.Returns(p2.EndToEndID); len(rets) != 1 || rets[0].Valor != "100.00" {
		t.Fatalf("devoluções %+v, want the 100.00 paid back", rets)
	}
	if got := w.get(t, c2.ID); got.Status == "paid" {
		t.Fatalf("a wrong amount settled the charge: %+v", got)
	}
}
