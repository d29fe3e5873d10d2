package bcbpix_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix"
	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// notified records what the adapter hands to ports.RecurringNotifications.
type notified struct {
	mu      sync.Mutex
	recs    []ports.Recurrence
	charges []ports.RecurringCharge
}

func (n *notified) OnRecurrence(_ context.Context, s ports.Scope, r ports.Recurrence) error {
	if s.AccountID != acct || s.Mode != domain.ModeLive {
		return errors.New("wrong scope")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.recs = append(n.recs, r)
	return nil
}

func (n *notified) OnRecurringCharge(_ context.Context, s ports.Scope, c ports.RecurringCharge) error {
	if s.AccountID != acct || s.Mode != domain.ModeLive {
		return errors.New("wrong scope")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.charges = append(n.charges, c)
	return nil
}

// waitRec waits for a notified rec that ok accepts.
func (n *notified) waitRec(t *testing.T, ok func(ports.Recurrence) bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		n.mu.Lock()
		for _, r := range n.recs {
			if ok(r) {
				n.mu.Unlock()
				return
			}
		}
		n.mu.Unlock()
	}
	t.Fatalf("no such rec notified: %+v", n.recs)
}

func (n *notified) waitCharge(t *testing.T, ok func(ports.RecurringCharge) bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		n.mu.Lock()
		for _, c := range n.charges {
			if ok(c) {
				n.mu.Unlock()
				return
			}
		}
		n.mu.Unlock()
	}
	t.Fatalf("no such cobr notified: %+v", n.charges)
}

// The PSP's rec and cobr callbacks reach the registered URL with the
// account's token; the adapter reads each rec and cobr back and hands it
// to the notifications: the approval, the debit with its Pix and the
// payer's revoke.
func TestRecurringCallbacksReadBackAndNotified(t *testing.T) {
	t.Parallel()
	a, sim, pki := newRecurringAdapterPKI(t)
	n := &notified{}
	a.SetRecurringNotifications(n)
	ctx := context.Background()
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/hook/"), "/")
		if len(parts) != 2 {
			http.NotFound(w, r)
			return
		}
		if ok, err := a.VerifyCallback(r.Context(), acct, parts[0]); err != nil || !ok {
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var err error
		switch parts[1] {
		case "rec":
			_, _, err = a.NotifyRecurrences(r.Context(), acct, body)
		case "cobr":
			_, _, err = a.NotifyRecurringCharges(r.Context(), acct, body)
		default:
			w.WriteHeader(http.StatusOK) // the /pix callbacks are not this test's
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		}
	}))
	cert, err := pki.QuitaServer.TLS()
	if err != nil {
		t.Fatal(err)
	}
	hs.TLS = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	hs.StartTLS()
	t.Cleanup(hs.Close)
	if err := a.RegisterWebhook(ctx, acct, hs.URL+"/hook"); err != nil {
		t.Fatal(err)
	}
	if sim.WebhookRec() == "" || sim.WebhookRec() != sim.WebhookCobR() || !strings.HasPrefix(sim.WebhookRec(), hs.URL+"/hook/") {
		t.Fatalf("registered %q and %q", sim.WebhookRec(), sim.WebhookCobR())
	}

	rec := approvedRec(t, a, sim, "cb", domain.JourneyQRCode)
	n.waitRec(t, func(r ports.Recurrence) bool { return r.RecID == rec.RecID && r.Status == domain.RecApproved })

	req := ports.RecurringChargeRequest{Scope: scope(), TxID: txid("cb-1"), RecID: rec.RecID, DueDate: brasiliaToday(t).AddDays(2),
		Amount: 4990}
	if _, err := a.CreateRecurringCharge(ctx, req); err != nil {
		t.Fatal(err)
	}
	n.waitCharge(t, func(c ports.RecurringCharge) bool { return c.TxID == req.TxID && c.Status == domain.CobRActive })
	pix, err := sim.DebitCobR(ctx, pixsim.CobRAction{TxID: req.TxID})
	if err != nil {
		t.Fatal(err)
	}
	n.waitCharge(t, func(c ports.RecurringCharge) bool {
		return c.TxID == req.TxID && c.Status == domain.CobRConcluded && len(c.Pix) == 1 && c.Pix[0].EndToEndID == pix.EndToEndID
	})
	if _, err := sim.CancelRecByPayer(ctx, pixsim.RecAction{IDRec: rec.RecID, Solicitante: pixsim.PSPPagador}); err != nil {
		t.Fatal(err)
	}
	n.waitRec(t, func(r ports.Recurrence) bool { return r.RecID == rec.RecID && r.CancelledByPayer })
	for _, cb := range sim.Callbacks() {
		if (cb.Cause == pixsim.CauseRec || cb.Cause == pixsim.CauseCobR) && cb.Status != http.StatusOK {
			t.Errorf("callback %s %v answered %d", cb.Cause, cb.IDs, cb.Status)
		}
	}
}

// A callback's body names what changed; a malformed one is refused, and
// without a receiver of the notifications the PSP is asked to retry.
func TestParseRecurringCallbacks(t *testing.T) {
	t.Parallel()
	recs, err := bcbpix.ParseRecCallback([]byte(`{"recs":[{"idRec":"RR999999982026120712345678901","status":"CANCELADA",
		"encerramento":{"cancelamento":{"solicitante":"USUARIO_PAGADOR","codigo":"SLDB"}},"ativacao":{"tipoJornada":"JORNADA_2"}}]}`))
	if err != nil || len(recs) != 1 || recs[0].Status != domain.RecCancelled || !recs[0].CancelledByPayer {
		t.Fatalf("recs %+v, %v", recs, err)
	}
	charges, err := bcbpix.ParseCobRCallback([]byte(`{"cobsr":[{"idRec":"RR999999982026120712345678901",
		"txid":"` + txid("p") + `","status":"ATIVA","tentativas":[{"dataLiquidacao":"2026-12-10","tipo":"AGND",
		"status":"REJEITADA","endToEndId":"E99999998202612071200abcdefghijk","rejeicao":{"codigo":"AM04"}},
		{"dataLiquidacao":"2026-12-11","tipo":"NTAG","status":"AGENDADA","endToEndId":"E99999998202612071200abcdefghijl"}]}]}`))
	if err != nil || len(charges) != 1 || len(charges[0].Attempts) != 2 || charges[0].Attempts[0].RejectCode != "AM04" ||
		charges[0].Attempts[1].Kind != domain.AttemptRetry || charges[0].Status != domain.CobRActive {
		t.Fatalf("charges %+v, %v", charges, err)
	}
	for _, body := range []string{`{"recs":[{"idRec":"short","status":"CRIADA"}]}`, `{"recs":[{"idRec":"RR999999982026120712345678901","status":"OUTRO"}]}`, `[`} {
		if _, err := bcbpix.ParseRecCallback([]byte(body)); !errors.Is(err, ports.ErrMalformedCallback) {
			t.Errorf("%s: %v", body, err)
		}
	}
	for _, body := range []string{`{"cobsr":[{"txid":"x","status":"ATIVA"}]}`, `{"cobsr":[{"txid":"` + txid("p") + `","status":"ATIVA","tentativas":[{"tipo":"ZZZZ"}]}]}`} {
		if _, err := bcbpix.ParseCobRCallback([]byte(body)); !errors.Is(err, ports.ErrMalformedCallback) {
			t.Errorf("%s: %v", body, err)
		}
	}
	a, _ := newRecurringAdapter(t)
	if _, _, err := a.NotifyRecurrences(context.Background(), acct, []byte(`{"recs":[]}`)); !errors.Is(err, ports.ErrAcquirerNotConfigured) {
		t.Errorf("without notifications: %v", err)
	}
}
