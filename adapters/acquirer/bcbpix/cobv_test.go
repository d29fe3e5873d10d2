package bcbpix_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/ports"
)

// A due-date charge goes to the PSP as a cobv with its terms; a retry of
// the txid takes the same cobv; the payer's bank pays the amount due on
// its day, which the adapter reads back; a cancel removes the cobv.
func TestCreateDueDateChargeAsCobV(t *testing.T) {
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
		Fine: &domain.Fine{Type: domain.FineFixed, Amount: 200}})
	if err != nil {
		t.Fatal(err)
	}
	req := createReq("due-1", 10000)
	req.Due, req.DebtorTaxID, req.DebtorName = &terms, "529.982.247-25", "Joao Souza"
	cob, err := a.CreatePixCharge(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := a.CreatePixCharge(ctx, req)
	if err != nil || again.BRCode != cob.BRCode || again.Location != cob.Location {
		t.Fatalf("retry: %+v, %v; want the same cobv %+v", again, err, cob)
	}
	// Paid today, before the due date: the original amount.
	early, err := sim.Pay(ctx, pixsim.PayRequest{TxID: req.TxID})
	if err != nil || early.Valor != "100.00" {
		t.Fatalf("paid early: %+v, %v", early, err)
	}
	late := createReq("due-2", 10000)
	late.Due, late.DebtorTaxID, late.DebtorName = &terms, "11.222.333/0001-81", "Loja Cliente"
	if _, err := a.CreatePixCharge(ctx, late); err != nil {
		t.Fatal(err)
	}
	day := terms.EffectiveDue().AddDays(1)
	pix, err := sim.Pay(ctx, pixsim.PayRequest{TxID: late.TxID, Date: day.String()})
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.GetPix(ctx, acct, pix.EndToEndID)
	if err != nil || got.Amount != 10200 || got.TxID != late.TxID {
		t.Fatalf("the late payment read back as %+v (%v), want 102.00 for %s", got, err, late.TxID)
	}
	// A cobv is cancelled by its txid, as a cob is.
	third := createReq("due-3", 10000)
	third.Due, third.DebtorTaxID, third.DebtorName = &terms, "529.982.247-25", "Joao Souza"
	if _, err := a.CreatePixCharge(ctx, third); err != nil {
		t.Fatal(err)
	}
	if err := a.CancelPixCharge(ctx, ports.CancelPixChargeRequest{Scope: scope(), TxID: third.TxID}); err != nil {
		t.Fatal(err)
	}
	if _, err := sim.Pay(ctx, pixsim.PayRequest{TxID: third.TxID}); err == nil {
		t.Error("a cancelled cobv was paid")
	}
	// Without its debtor a due-date charge is refused before any call.
	bare := createReq("due-4", 10000)
	bare.Due = &terms
	bare.PayerTaxID = ""
	if _, err := a.CreatePixCharge(ctx, bare); err == nil {
		t.Error("a due-date charge without a debtor was opened")
	}
}

// A retry of a txid whose cobv holds other terms (another discount) is
// not taken as this charge's cobv.
func TestCobVRetryWithOtherTermsIsRefused(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	_, psp := startPSP(t, pki)
	a, _ := newAdapter(t, pki, psp.URL, acct)
	ctx := context.Background()
	brasilia, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	today := bizdays.DateOf(time.Now().In(brasilia))
	due := bizdays.NextBusinessDay(today.AddDays(10))
	withDiscount := func(amount int64) *domain.DueTerms {
		terms, err := domain.NewDueTerms(domain.DueTermsParams{Original: 10000, Created: today, Due: due,
			Discount: &domain.Discount{Type: domain.DiscountFixedUntil, Until: []domain.DiscountUntil{{Date: today.AddDays(2), Amount: amount}}}})
		if err != nil {
			t.Fatal(err)
		}
		return &terms
	}
	req := createReq("due-other", 10000)
	req.Due, req.DebtorTaxID, req.DebtorName = withDiscount(500), "529.982.247-25", "Joao Souza"
	if _, err := a.CreatePixCharge(ctx, req); err != nil {
		t.Fatal(err)
	}
	// The PSP revises an ATIVA cobv on a second PUT, so the answer holds
	// the new terms; close the first so the second PUT is refused.
	if err := a.CancelPixCharge(ctx, ports.CancelPixChargeRequest{Scope: scope(), TxID: req.TxID}); err != nil {
		t.Fatal(err)
	}
	req.Due = withDiscount(700)
	if _, err := a.CreatePixCharge(ctx, req); err == nil {
		t.Fatal("a cobv with another discount was taken as this charge's")
	}
}

// A create retried after its cobv was removed (a removal that raced the
// retry) is refused: a removed cobv cannot be paid, so it is not taken as
// the charge's even with the same terms.
func TestCobVRetryAfterRemovalIsRefused(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	_, psp := startPSP(t, pki)
	a, _ := newAdapter(t, pki, psp.URL, acct)
	ctx := context.Background()
	brasilia, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	today := bizdays.DateOf(time.Now().In(brasilia))
	terms, err := domain.NewDueTerms(domain.DueTermsParams{Original: 10000, Created: today, Due: bizdays.NextBusinessDay(today.AddDays(10))})
	if err != nil {
		t.Fatal(err)
	}
	req := createReq("due-removed", 10000)
	req.Due, req.DebtorTaxID, req.DebtorName = &terms, "529.982.247-25", "Joao Souza"
	if _, err := a.CreatePixCharge(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := a.CancelPixCharge(ctx, ports.CancelPixChargeRequest{Scope: scope(), TxID: req.TxID}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreatePixCharge(ctx, req); !errors.Is(err, ports.ErrAcquirerRejected) {
		t.Fatalf("a removed cobv with the same terms: %v, want the PSP's refusal", err)
	}
}
