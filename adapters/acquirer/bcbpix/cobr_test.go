package bcbpix_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix"
	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/ports"
)

// A cycle's cobr is created once per txid, debited by the payer's bank
// and read back CONCLUIDA with the Pix that paid it; another fails, is
// retried on a later business day and paid by the retry.
func TestRecurringChargesDebitedFailedAndRetried(t *testing.T) {
	t.Parallel()
	a, sim := newRecurringAdapter(t)
	ctx := context.Background()
	rec := approvedRec(t, a, sim, "cycles", domain.JourneyQRCode)
	start := brasiliaToday(t).AddDays(2)

	first := ports.RecurringChargeRequest{Scope: scope(), TxID: txid("cycle-1"), RecID: rec.RecID, DueDate: start,
		Amount: 4990, Info: "Ciclo 1"}
	cobr, err := a.CreateRecurringCharge(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	// The PSP answers the cobr CRIADA and the payer's PSP schedules its
	// debit: it is open either way.
	if !cobr.Status.Open() || len(cobr.Attempts) != 1 || cobr.Attempts[0].Kind != domain.AttemptOnDueDate ||
		cobr.Attempts[0].Date != domain.FirstDebitDate(start) {
		t.Fatalf("created %+v", cobr)
	}
	// A retry with the same txid answers the cobr the PSP holds.
	again, err := a.CreateRecurringCharge(ctx, first)
	if err != nil || again.TxID != cobr.TxID || len(again.Attempts) != 1 {
		t.Fatalf("retry: %+v, %v", again, err)
	}
	// The same txid for another amount is not that cobr.
	other := first
	other.Amount = 5000
	if _, err := a.CreateRecurringCharge(ctx, other); !errors.Is(err, ports.ErrAcquirerRejected) {
		t.Fatalf("same txid, other amount: %v", err)
	}
	held, _ := sim.CobRByTxID(first.TxID)
	if held.Recebedor.Conta != testReceiver.Number || held.Recebedor.TipoConta != "CORRENTE" || !held.AjusteDiaUtil ||
		held.InfoAdicional != "Ciclo 1" {
		t.Errorf("pixsim holds %+v", held)
	}
	pix, err := sim.DebitCobR(ctx, pixsim.CobRAction{TxID: first.TxID})
	if err != nil {
		t.Fatal(err)
	}
	paid, err := a.GetRecurringCharge(ctx, scope(), first.TxID)
	if err != nil || paid.Status != domain.CobRConcluded || len(paid.Pix) != 1 || paid.Pix[0].EndToEndID != pix.EndToEndID ||
		paid.Pix[0].Amount != 4990 || paid.Attempts[0].Status != domain.AttemptPaid || paid.Attempts[0].EndToEndID != pix.EndToEndID {
		t.Fatalf("after the debit: %+v, %v", paid, err)
	}
	if err := a.CancelRecurringCharge(ctx, ports.CancelRecurringChargeRequest{Scope: scope(), TxID: first.TxID}); err != nil {
		t.Errorf("cancel of a paid cobr: %v", err)
	}

	second := ports.RecurringChargeRequest{Scope: scope(), TxID: txid("cycle-2"), RecID: rec.RecID, DueDate: start.AddDays(7),
		Amount: 4990}
	if _, err := a.CreateRecurringCharge(ctx, second); err != nil {
		t.Fatal(err)
	}
	failed, err := sim.FailCobR(ctx, pixsim.CobRAction{TxID: second.TxID, Codigo: "AM02"})
	if err != nil || failed.Status != pixsim.CobRAtiva {
		t.Fatalf("fail: %+v, %v", failed, err)
	}
	got, err := a.GetRecurringCharge(ctx, scope(), second.TxID)
	if err != nil || got.Status != domain.CobRActive || got.Attempts[0].Status != domain.AttemptRejected || got.Attempts[0].RejectCode != "AM02" {
		t.Fatalf("after the failure: %+v, %v", got, err)
	}
	day := bizdays.NextBusinessDay(got.Attempts[0].Date.AddDays(1))
	retry := ports.RetryRecurringChargeRequest{Scope: scope(), TxID: second.TxID, Date: day}
	retried, err := a.RetryRecurringCharge(ctx, retry)
	if err != nil || len(retried.Attempts) != 2 || retried.Attempts[1].Kind != domain.AttemptRetry || retried.Attempts[1].Date != day {
		t.Fatalf("retry: %+v, %v", retried, err)
	}
	// The same retry again (its answer lost) is the one the PSP holds.
	if again, err := a.RetryRecurringCharge(ctx, retry); err != nil || len(again.Attempts) != 2 {
		t.Fatalf("retry again: %+v, %v", again, err)
	}
	pix2, err := sim.DebitCobR(ctx, pixsim.CobRAction{TxID: second.TxID})
	if err != nil {
		t.Fatal(err)
	}
	got, err = a.GetRecurringCharge(ctx, scope(), second.TxID)
	if err != nil || got.Status != domain.CobRConcluded || got.Attempts[1].Status != domain.AttemptPaid ||
		got.Attempts[1].EndToEndID != pix2.EndToEndID || len(got.Pix) != 1 {
		t.Fatalf("after the retry's debit: %+v, %v", got, err)
	}
	if _, err := a.GetRecurringCharge(ctx, scope(), txid("no-such-cycle")); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("unknown cobr: %v", err)
	}
}

// The receiver cancels a cobr before its debit day; a second cancel is
// done already. The payer's revoke of the rec cancels its open cobr.
func TestRecurringChargeCancelled(t *testing.T) {
	t.Parallel()
	a, sim := newRecurringAdapter(t)
	ctx := context.Background()
	rec := approvedRec(t, a, sim, "cancel", domain.JourneyQRCode)
	start := brasiliaToday(t).AddDays(2)
	req := ports.RecurringChargeRequest{Scope: scope(), TxID: txid("cancel-1"), RecID: rec.RecID, DueDate: start.AddDays(1),
		Amount: 4990}
	if _, err := a.CreateRecurringCharge(ctx, req); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := a.CancelRecurringCharge(ctx, ports.CancelRecurringChargeRequest{Scope: scope(), TxID: req.TxID}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := a.GetRecurringCharge(ctx, scope(), req.TxID)
	if err != nil || got.Status != domain.CobRCancelled || got.Attempts[0].Status != domain.AttemptCancelled {
		t.Fatalf("after cancel: %+v, %v", got, err)
	}
	next := ports.RecurringChargeRequest{Scope: scope(), TxID: txid("cancel-2"), RecID: rec.RecID, DueDate: start.AddDays(7),
		Amount: 4990}
	if _, err := a.CreateRecurringCharge(ctx, next); err != nil {
		t.Fatal(err)
	}
	if _, err := sim.CancelRecByPayer(ctx, pixsim.RecAction{IDRec: rec.RecID}); err != nil {
		t.Fatal(err)
	}
	if got, err := a.GetRecurringCharge(ctx, scope(), next.TxID); err != nil || got.Status != domain.CobRCancelled {
		t.Fatalf("after the payer's revoke: %+v, %v", got, err)
	}
}

// An account without a receiver's account cannot create cobrs.
func TestRecurringChargeNeedsTheReceiversAccount(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	_, psp := startPSP(t, pki)
	a, _ := newAdapter(t, pki, psp.URL, acct)
	_, err := a.CreateRecurringCharge(context.Background(), ports.RecurringChargeRequest{Scope: scope(), TxID: txid("x"),
		RecID: "RN99999998202612070000000000X", DueDate: brasiliaToday(t).AddDays(3), Amount: 100})
	if !errors.Is(err, ports.ErrAcquirerNotConfigured) {
		t.Fatalf("%v", err)
	}
}

// Answers the PSP loses on the way back: the cobr PUT is retried and
// read back, the solicrec and the retentativa are found at the PSP by the
// caller's retry or at once; nothing is made twice.
func TestRecurringCallsWithLostAnswers(t *testing.T) {
	t.Parallel()
	a, sim := newRecurringAdapter(t)
	recurringCallsWithLostAnswers(t, a, sim)
}

func recurringCallsWithLostAnswers(t *testing.T, a *bcbpix.Acquirer, sim *pixsim.Server) {
	t.Helper()
	ctx := context.Background()
	rec := approvedRec(t, a, sim, "lost", domain.JourneyQRCode)
	req := ports.RecurringChargeRequest{Scope: scope(), TxID: txid("lost-1"), RecID: rec.RecID, DueDate: brasiliaToday(t).AddDays(2),
		Amount: 4990}
	sim.LoseNextAnswers(1)
	if got, err := a.CreateRecurringCharge(ctx, req); err != nil || got.TxID != req.TxID || len(got.Attempts) != 1 {
		t.Fatalf("cobr after a lost answer: %+v, %v", got, err)
	}
	if _, err := sim.FailCobR(ctx, pixsim.CobRAction{TxID: req.TxID}); err != nil {
		t.Fatal(err)
	}
	cur, _ := a.GetRecurringCharge(ctx, scope(), req.TxID)
	day := bizdays.NextBusinessDay(cur.Attempts[0].Date.AddDays(1))
	sim.LoseNextAnswers(1)
	got, err := a.RetryRecurringCharge(ctx, ports.RetryRecurringChargeRequest{Scope: scope(), TxID: req.TxID, Date: day})
	if err != nil || len(got.Attempts) != 2 || got.Attempts[1].Date != day {
		t.Fatalf("retentativa after a lost answer: %+v, %v", got, err)
	}

	j1, err := a.CreateRecurrence(ctx, recReq(t, "lost-j1", domain.JourneyAuthorizationRequest))
	if err != nil {
		t.Fatal(err)
	}
	ar := ports.AuthorizationRequest{Scope: scope(), RecID: j1.RecID, DebtorTaxID: "529.982.247-25",
		ExpiresAt: time.Now().Add(time.Hour), PayerAccount: payerAccount}
	sim.LoseNextAnswers(1)
	sol, err := a.RequestAuthorization(ctx, ar)
	if err != nil {
		t.Fatalf("lost solicrec answer: %v", err)
	}
	if again, err := a.RequestAuthorization(ctx, ar); err != nil || again.SolicRecID != sol.SolicRecID {
		t.Fatalf("solicrec retry: %+v, %v", again, err)
	}
	held, _ := sim.RecByID(j1.RecID)
	if len(held.Solicitacao) != 1 || held.Solicitacao[0].IDSolicRec != sol.SolicRecID {
		t.Fatalf("the PSP holds %+v; the retry answered %s", held.Solicitacao, sol.SolicRecID)
	}
	// A rec with a solicrec is no earlier try of a create: the same
	// request opens another rec.
	again, err := a.CreateRecurrence(ctx, recReq(t, "lost-j1", domain.JourneyAuthorizationRequest))
	if err != nil || again.RecID == j1.RecID {
		t.Fatalf("create after the solicrec: %+v, %v", again, err)
	}
}
