package bcbpix_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/ports"
)

// A revision reaches the PSP as PATCH /cobv/{txid} with the whole of the
// new terms: the cobv holds them at revisao 1 (a rule the terms lost is
// gone); the same revision again, or one whose answer was lost and is
// sent again, changes nothing more; the payer's bank pays the revised
// amount; a cobv that is closed or unknown refuses the revision.
func TestReviseDueChargeAsPatch(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	sim, psp := startPSP(t, pki)
	a, _ := newAdapter(t, pki, psp.URL, acct)
	ctx := context.Background()
	brasilia, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	today := bizdays.DateOf(time.Now().In(brasilia))
	due := bizdays.NextBusinessDay(today.AddDays(10))
	terms, err := domain.NewDueTerms(domain.DueTermsParams{Original: 10000, Created: today, Due: due,
		Fine:     &domain.Fine{Type: domain.FineFixed, Amount: 200},
		Interest: &domain.Interest{Type: domain.InterestAmountPerDay, Amount: 10}})
	if err != nil {
		t.Fatal(err)
	}
	req := createReq("revise-1", 10000)
	req.Due, req.DebtorTaxID, req.DebtorName = &terms, "529.982.247-25", "Joao Souza"
	if _, err := a.CreatePixCharge(ctx, req); err != nil {
		t.Fatal(err)
	}
	later := bizdays.NextBusinessDay(due.AddDays(7))
	days := 4
	revised, err := domain.NewDueTerms(domain.DueTermsParams{Original: 10000, Created: today, Due: later, DaysAfterDue: &days,
		Fine: &domain.Fine{Type: domain.FinePercent, Rate: "5.00"}})
	if err != nil {
		t.Fatal(err)
	}
	rev := ports.ReviseDueChargeRequest{Scope: scope(), ChargeID: "revise-1", TxID: req.TxID, Due: revised}
	if err := a.ReviseDueCharge(ctx, rev); err != nil {
		t.Fatal(err)
	}
	cob, _ := sim.CobVByTxID(req.TxID)
	if cob.Revisao != 1 || cob.Calendario.DataDeVencimento != later.String() || *cob.Calendario.ValidadeAposVencimento != 4 ||
		cob.Valor.Juros != nil || cob.Valor.Multa == nil || cob.Valor.Multa.Modalidade != 2 || cob.Valor.Multa.ValorPerc != "5.00" {
		t.Fatalf("the PSP's cobv after the revision: %+v", cob)
	}
	if err := a.ReviseDueCharge(ctx, rev); err != nil {
		t.Fatal(err)
	}
	sim.LoseNextAnswers(1)
	if err := a.ReviseDueCharge(ctx, rev); err != nil {
		t.Fatalf("a revision whose answer was lost: %v", err)
	}
	if cob, _ := sim.CobVByTxID(req.TxID); cob.Revisao != 1 {
		t.Errorf("revisao %d after the same revision twice more, want 1", cob.Revisao)
	}
	// Two days late by the revised terms: 100.00 + 5 %, no interest.
	pix, err := sim.Pay(ctx, pixsim.PayRequest{TxID: req.TxID, Date: later.AddDays(2).String()})
	if err != nil || pix.Valor != "105.00" {
		t.Fatalf("paid %+v, %v; want the revised 105.00", pix, err)
	}
	if err := a.ReviseDueCharge(ctx, rev); !errors.Is(err, ports.ErrAcquirerRejected) {
		t.Errorf("a revision of a paid cobv: %v, want ErrAcquirerRejected", err)
	}
	unknown := rev
	unknown.TxID = txid("revise-none")
	if err := a.ReviseDueCharge(ctx, unknown); !errors.Is(err, ports.ErrAcquirerRejected) {
		t.Errorf("a revision of a cobv the PSP does not have: %v, want ErrAcquirerRejected", err)
	}
}

// A live due-date charge revised through the merchant API: the cobv at
// the PSP has the new terms at revisao 1, and a payment the payer's bank
// makes late for the revised amount settles the charge for it.
func TestLiveDueDateChargeRevisedThroughPixsim(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, b.dsn(t))
			brasilia, err := time.LoadLocation("America/Sao_Paulo")
			if err != nil {
				t.Fatal(err)
			}
			due := bizdays.NextBusinessDay(bizdays.DateOf(time.Now().In(brasilia)).AddDays(10))
			c := w.create(t, map[string]any{"amount": 10000, "payment_method": "pix",
				"customer": map[string]any{"name": "Joao Souza", "document": expectedDoc},
				"due_date": due.String(), "days_after_due": 15,
				"fine":     map[string]any{"type": "fixed", "amount": 200},
				"interest": map[string]any{"type": "amount_per_day", "amount": 10}})
			later := bizdays.NextBusinessDay(due.AddDays(5))
			code, raw := w.do(t, w.acct.LiveKey, http.MethodPost, "/charges/"+c.ID, map[string]any{
				"due_date": later.String(), "fine": map[string]any{"type": "fixed", "amount": 500}, "interest": nil}, "")
			var revised struct {
				DueDate string          `json:"due_date"`
				Fine    map[string]any  `json:"fine"`
				Inter   json.RawMessage `json:"interest"`
			}
			if err := json.Unmarshal(raw, &revised); err != nil || code != http.StatusOK || revised.DueDate != later.String() || revised.Inter != nil {
				t.Fatalf("revise: %d %s", code, raw)
			}
			cob, ok := w.sim.CobVByTxID(c.Pix.TxID)
			if !ok || cob.Revisao != 1 || cob.Calendario.DataDeVencimento != later.String() || cob.Valor.Juros != nil ||
				cob.Valor.Multa == nil || cob.Valor.Multa.ValorPerc != "5.00" {
				t.Fatalf("the PSP's cobv after the revision: %+v", cob)
			}
			// Three days after the revised due date: 100.00 + the 5.00 fine.
			p := w.pay(t, pixsim.PayRequest{TxID: c.Pix.TxID, PayerTaxID: expectedDoc, Date: later.AddDays(3).String()})
			if p.Valor != "105.00" {
				t.Fatalf("paid %s, want the revised amount 105.00", p.Valor)
			}
			code, raw = w.do(t, w.acct.LiveKey, http.MethodGet, "/charges/"+c.ID, nil, "")
			var got struct {
				Status string `json:"status"`
				Paid   struct {
					Amount int64 `json:"amount"`
					Fine   int64 `json:"fine"`
				} `json:"paid"`
			}
			if err := json.Unmarshal(raw, &got); err != nil || code != 200 || got.Status != "paid" || got.Paid.Amount != 10500 || got.Paid.Fine != 500 {
				t.Fatalf("after the callback: %d %s", code, raw)
			}
			// Paid: the PSP's cobv is CONCLUIDA and Quita refuses first.
			code, raw = w.do(t, w.acct.LiveKey, http.MethodPost, "/charges/"+c.ID, map[string]any{"days_after_due": 20}, "")
			if code != http.StatusConflict {
				t.Errorf("a revision of the paid charge: %d %s", code, raw)
			}
		})
	}
}
