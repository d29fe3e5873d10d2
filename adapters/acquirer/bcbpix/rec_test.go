package bcbpix_test

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix"
	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/adapters/acquirer/modes"
	"github.com/quitapix/quita/adapters/acquirer/sandbox"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
)

// The receiver's account the tests' cobrs credit.
var testReceiver = &bcbpix.ReceiverAccount{Branch: "0001", Number: "123456", Type: "CORRENTE"}

// newRecurringAdapter is newAdapter with the receiver's account
// configured, over a running pixsim.
func newRecurringAdapter(t *testing.T) (*bcbpix.Acquirer, *pixsim.Server) {
	t.Helper()
	a, sim, _ := newRecurringAdapterPKI(t)
	return a, sim
}

func newRecurringAdapterPKI(t *testing.T) (*bcbpix.Acquirer, *pixsim.Server, testPKI) {
	t.Helper()
	pki := newPKI(t)
	a, sim := newRecurringAdapterOn(t, pki, func(sim *pixsim.Server) http.Handler { return sim })
	return a, sim, pki
}

// newRecurringAdapterOn runs pixsim behind wrap (as startPSP does) and
// configures the adapter with the receiver's account for it.
func newRecurringAdapterOn(t *testing.T, pki testPKI, wrap func(*pixsim.Server) http.Handler) (*bcbpix.Acquirer, *pixsim.Server) {
	t.Helper()
	cb, err := pki.PSPCallback.TLS()
	if err != nil {
		t.Fatal(err)
	}
	sim := pixsim.New(pixsim.Config{ClientID: testClientID, ClientSecret: testClientSecret, CallbackCert: &cb, CallbackCAs: pki.Pool})
	t.Cleanup(sim.Close)
	psp := httptest.NewUnstartedServer(wrap(sim))
	psp.TLS = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pki.ServerCert},
		ClientCAs: pki.Pool, ClientAuth: tls.RequireAndVerifyClientCert}
	psp.StartTLS()
	t.Cleanup(psp.Close)
	sealer, err := bcbpix.NewSealer(testKey())
	if err != nil {
		t.Fatal(err)
	}
	a := bcbpix.New(newMemStore(), sealer, bcbpix.Options{Retry: []time.Duration{5 * time.Millisecond, 10 * time.Millisecond},
		Log: slog.New(slog.DiscardHandler)})
	cfg := accountConfig(pki, psp.URL)
	cfg.Receiver = testReceiver
	if err := a.Configure(context.Background(), acct, cfg); err != nil {
		t.Fatal(err)
	}
	return a, sim
}

// brasiliaToday is today's date in Brasília, the PSP's calendar.
func brasiliaToday(t *testing.T) bizdays.Date {
	t.Helper()
	loc, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	return bizdays.DateOf(time.Now().In(loc))
}

// recReq is a rec of key for journey j: weekly from two days ahead, fixed
// at R$ 49,90, retries allowed.
func recReq(t *testing.T, key string, j domain.Journey) ports.CreateRecurrenceRequest {
	req := ports.CreateRecurrenceRequest{Scope: scope(), SubscriptionID: "sub-" + key, Key: key, DebtorName: "Joao Souza",
		DebtorTaxID: "529.982.247-25", Contract: "CTR-" + key, Object: "Plano semanal", StartDate: brasiliaToday(t).AddDays(2),
		Interval: domain.IntervalWeekly, Amount: 4990, RetryPolicy: domain.RetryThreeInSevenDays, Journey: j,
		MerchantName: "LOJA", MerchantCity: "SAO PAULO"}
	if j == domain.JourneyAuthorizationRequest {
		req.PayerAccount = payerAccount
	}
	return req
}

var payerAccount = &ports.PayerAccount{ISPB: "99999997", Branch: "0001", Number: "998877"}

// approvedRec opens a rec of key for journey j and has the payer approve
// it at pixsim, through the journey's own step.
func approvedRec(t *testing.T, a *bcbpix.Acquirer, sim *pixsim.Server, key string, j domain.Journey) *ports.Recurrence {
	t.Helper()
	ctx := context.Background()
	req := recReq(t, key, j)
	if j == domain.JourneyQRCodeWithFirstPayment {
		cob, err := a.CreatePixCharge(ctx, createReq("first-"+key, 4990))
		if err != nil {
			t.Fatal(err)
		}
		req.FirstPaymentTxID, req.FirstPaymentBRCode = txid("first-"+key), cob.BRCode
	}
	rec, err := a.CreateRecurrence(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != domain.RecCreated || len(rec.RecID) != 29 {
		t.Fatalf("created %+v", rec)
	}
	if j.QR() != (rec.BRCode != "" && rec.Location != "") {
		t.Fatalf("%s: QR code %q at %q", j, rec.BRCode, rec.Location)
	}
	// A retry of the create (its answer lost) takes the same rec.
	again, err := a.CreateRecurrence(ctx, req)
	if err != nil || *again != *rec {
		t.Fatalf("retry: %+v, %v; want %+v", again, err, rec)
	}
	switch j {
	case domain.JourneyAuthorizationRequest:
		ar := ports.AuthorizationRequest{Scope: scope(), RecID: rec.RecID, DebtorTaxID: req.DebtorTaxID,
			ExpiresAt: time.Now().Add(48 * time.Hour), PayerAccount: payerAccount}
		sol, err := a.RequestAuthorization(ctx, ar)
		if err != nil || !sol.Status.Open() {
			t.Fatalf("solicrec: %+v, %v", sol, err)
		}
		// The PSP keeps one open solicrec per rec: a retry answers it.
		if again, err := a.RequestAuthorization(ctx, ar); err != nil || again.SolicRecID != sol.SolicRecID {
			t.Fatalf("solicrec retry: %+v, %v; want %s", again, err, sol.SolicRecID)
		}
		got, _ := sim.SolicRecByID(sol.SolicRecID)
		if got.Destinatario.Conta != payerAccount.Number || got.Destinatario.CPF != "52998224725" {
			t.Fatalf("the solicrec went to %+v", got.Destinatario)
		}
		if _, err := sim.AcceptSolicRec(ctx, pixsim.SolicRecAnswer{IDSolicRec: sol.SolicRecID}); err != nil {
			t.Fatal(err)
		}
	default:
		if _, err := sim.ApproveRec(ctx, pixsim.RecApproval{IDRec: rec.RecID}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := a.GetRecurrence(ctx, scope(), rec.RecID)
	if err != nil || got.Status != domain.RecApproved || got.CancelledByPayer {
		t.Fatalf("after approval: %+v, %v", got, err)
	}
	return got
}

// Each journey's rec is opened at the PSP with its terms, approved by the
// payer through that journey and read back APROVADA; retries of the
// create and of the solicrec open nothing new.
func TestRecurrenceJourneysApprovedAtThePSP(t *testing.T) {
	t.Parallel()
	a, sim := newRecurringAdapter(t)
	for _, j := range []domain.Journey{domain.JourneyAuthorizationRequest, domain.JourneyQRCode, domain.JourneyQRCodeWithFirstPayment} {
		rec := approvedRec(t, a, sim, "j-"+string(j), j)
		got, ok := sim.RecByID(rec.RecID)
		if !ok {
			t.Fatalf("%s: pixsim has no rec %s", j, rec.RecID)
		}
		want := map[domain.Journey]string{domain.JourneyAuthorizationRequest: pixsim.Jornada1,
			domain.JourneyQRCode: pixsim.Jornada2, domain.JourneyQRCodeWithFirstPayment: pixsim.Jornada3}[j]
		if got.Ativacao.TipoJornada != want || got.Vinculo.Contrato != "CTR-j-"+string(j) ||
			got.Vinculo.Devedor.CPF != "52998224725" || got.Calendario.Periodicidade != "SEMANAL" ||
			got.Valor == nil || got.Valor.ValorRec != "49.90" || got.PoliticaRetentativa != pixsim.RetryThreeIn7Days {
			t.Errorf("%s: pixsim holds %+v", j, got)
		}
		if j == domain.JourneyQRCodeWithFirstPayment {
			cob, _ := sim.CobByTxID(txid("first-" + "j-" + string(j)))
			if cob.Status != "CONCLUIDA" {
				t.Errorf("the first payment is %s after a JORNADA_3 approval", cob.Status)
			}
		}
	}
}

// The composite QR code of qr_code_with_first_payment carries the first
// payment's location and the rec's.
func TestFirstPaymentJourneyQRCodeIsComposite(t *testing.T) {
	t.Parallel()
	a, _ := newRecurringAdapter(t)
	ctx := context.Background()
	cob, err := a.CreatePixCharge(ctx, createReq("first-qr", 4990))
	if err != nil {
		t.Fatal(err)
	}
	req := recReq(t, "qr3", domain.JourneyQRCodeWithFirstPayment)
	req.FirstPaymentTxID, req.FirstPaymentBRCode = txid("first-qr"), cob.BRCode
	rec, err := a.CreateRecurrence(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rec.BRCode, cob.Location) || !strings.Contains(rec.BRCode, rec.Location) {
		t.Fatalf("QR code %q lacks %q or %q", rec.BRCode, cob.Location, rec.Location)
	}
	got, err := a.GetRecurrence(ctx, scope(), rec.RecID)
	if err != nil || got.BRCode != rec.BRCode {
		t.Fatalf("read back %+v, %v; want the composite code", got, err)
	}
	// Another subscription with other terms is another rec.
	other := recReq(t, "qr2", domain.JourneyQRCode)
	o, err := a.CreateRecurrence(ctx, other)
	if err != nil || o.RecID == rec.RecID || strings.Contains(o.BRCode, cob.Location) {
		t.Fatalf("other rec %+v, %v", o, err)
	}
}

// The payer revoking an approved rec reads back CANCELADA by the payer;
// cancelling it again succeeds. The receiver's own cancel is not the
// payer's.
func TestRecurrenceCancelledByPayerAndByReceiver(t *testing.T) {
	t.Parallel()
	a, sim := newRecurringAdapter(t)
	ctx := context.Background()
	rec := approvedRec(t, a, sim, "revoke", domain.JourneyQRCode)
	if _, err := sim.CancelRecByPayer(ctx, pixsim.RecAction{IDRec: rec.RecID}); err != nil {
		t.Fatal(err)
	}
	got, err := a.GetRecurrence(ctx, scope(), rec.RecID)
	if err != nil || got.Status != domain.RecCancelled || !got.CancelledByPayer {
		t.Fatalf("after the payer's revoke: %+v, %v", got, err)
	}
	if err := a.CancelRecurrence(ctx, ports.CancelRecurrenceRequest{Scope: scope(), RecID: rec.RecID}); err != nil {
		t.Fatalf("cancel of a cancelled rec: %v", err)
	}

	mine, err := a.CreateRecurrence(ctx, recReq(t, "mine", domain.JourneyAuthorizationRequest))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.CancelRecurrence(ctx, ports.CancelRecurrenceRequest{Scope: scope(), RecID: mine.RecID}); err != nil {
		t.Fatal(err)
	}
	got, err = a.GetRecurrence(ctx, scope(), mine.RecID)
	if err != nil || got.Status != domain.RecCancelled || got.CancelledByPayer {
		t.Fatalf("after the receiver's cancel: %+v, %v", got, err)
	}
	if err := a.CancelRecurrence(ctx, ports.CancelRecurrenceRequest{Scope: scope(), RecID: mine.RecID}); err != nil {
		t.Fatalf("second cancel: %v", err)
	}
	// A rec the PSP does not know.
	if _, err := a.GetRecurrence(ctx, scope(), "RN99999998202612070000000000X"); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("unknown rec: %v", err)
	}
}

// A solicrec needs the payer's account at its bank (the API Pix's
// destinatario): without it the rec of an authorization_request is not
// opened, and a solicrec is refused, before the PSP, with
// ErrPayerAccountRequired.
func TestAuthorizationRequestNeedsThePayersAccount(t *testing.T) {
	t.Parallel()
	a, _ := newRecurringAdapter(t)
	ctx := context.Background()
	bare := recReq(t, "noacct", domain.JourneyAuthorizationRequest)
	bare.PayerAccount = nil
	if _, err := a.CreateRecurrence(ctx, bare); !errors.Is(err, ports.ErrPayerAccountRequired) || !errors.Is(err, ports.ErrAcquirerRejected) {
		t.Fatalf("a rec for authorization_request without the payer's account: %v", err)
	}
	rec, err := a.CreateRecurrence(ctx, recReq(t, "noacct", domain.JourneyAuthorizationRequest))
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.RequestAuthorization(ctx, ports.AuthorizationRequest{Scope: scope(), RecID: rec.RecID,
		DebtorTaxID: "529.982.247-25", ExpiresAt: time.Now().Add(time.Hour)})
	if !errors.Is(err, ports.ErrPayerAccountRequired) {
		t.Fatalf("without the payer's account: %v", err)
	}
}

// The mode router sends live mode's Pix Automático to bcbpix and test
// mode's to the sandbox.
func TestRouterSendsLiveRecurrencesToBCBPix(t *testing.T) {
	t.Parallel()
	a, sim := newRecurringAdapter(t)
	sb := sandbox.New(sandbox.Config{LocationHost: "pay.example.com/pix"}, testkit.NewClock(time.Now()))
	r := &modes.Router{Test: sb, Live: a}
	ctx := context.Background()
	live, err := r.CreateRecurrence(ctx, recReq(t, "routed", domain.JourneyQRCode))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sim.RecByID(live.RecID); !ok {
		t.Fatalf("live rec %s is not at the PSP", live.RecID)
	}
	test := recReq(t, "routed", domain.JourneyQRCode)
	test.Mode = domain.ModeTest
	sbRec, err := r.CreateRecurrence(ctx, test)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sim.RecByID(sbRec.RecID); ok {
		t.Fatal("a test-mode rec reached the PSP")
	}
}
