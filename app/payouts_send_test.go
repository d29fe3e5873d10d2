package app_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// released is how many payout_released entries the payout has.
func (r *payoutRig) released(id string) int {
	r.t.Helper()
	n, err := r.db.Bun().NewSelect().Table("ledger_entries").
		Where("payout_id = ? AND kind = ?", id, string(domain.EntryPayoutRelease)).Count(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	return int(n)
}

// events is how many events of type typ the payout has.
func (r *payoutRig) events(id string, typ domain.EventType) int {
	r.t.Helper()
	evs, err := r.db.ListChargeEvents(context.Background(), r.caller.Scope(), domain.PrefixPayout+id)
	if err != nil {
		r.t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

func (r *payoutRig) status(svc *app.PayoutService, id string) domain.PayoutStatus {
	r.t.Helper()
	p, err := svc.Get(context.Background(), r.caller, id)
	if err != nil {
		r.t.Fatal(err)
	}
	return p.Status()
}

// pass runs the worker once the payout's lease has ended.
func (r *payoutRig) pass(svc *app.PayoutService) {
	r.t.Helper()
	r.clock.Advance(11 * time.Second)
	if _, err := svc.SendPayouts(context.Background()); err != nil {
		r.t.Fatal(err)
	}
}

// sentPayout creates a payout and lets the worker send it: the PSP
// accepts it and works on it (processing).
func (r *payoutRig) sentPayout(svc *app.PayoutService, key string) string {
	r.t.Helper()
	r.psp.answer = domain.PayoutProcessing
	resp, err := r.create(svc, key)
	if err != nil {
		r.t.Fatal(err)
	}
	id := string(resp.Body)
	r.pass(svc)
	if st := r.status(svc, id); st != domain.PayoutProcessing || r.psp.sent() != 1 {
		r.t.Fatalf("after the send: %s, %d Pix sent", st, r.psp.sent())
	}
	return id
}

// TestPayoutPassStartsItsClaimTogether: one worker pass marks every pending
// payout of its claim processing in one transaction, before sending any,
// and reads the processing ones in it; a payout whose step fails is left
// pending for the next pass and does not hold the others back.
func TestPayoutPassStartsItsClaimTogether(t *testing.T) {
	t.Parallel()
	r := newPayoutRig(t)
	_, svc := r.process()
	sent := r.sentPayout(svc, "payout-sent-before") // processing at the PSP
	var ids []string
	for _, key := range []string{"payout-a", "payout-b"} {
		resp, err := r.create(svc, key)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, string(resp.Body))
	}
	r.store.mu.Lock()
	r.store.updates, r.store.batches = 0, 0
	r.store.dieBeforeStep = domain.PayoutProcessing // the first of the two fails its step
	r.store.mu.Unlock()
	r.clock.Advance(11 * time.Second)
	if _, err := svc.SendPayouts(context.Background()); !errors.Is(err, errDied) {
		t.Fatalf("pass: %v, want the failed step reported", err)
	}
	var started, left string
	for _, id := range ids {
		switch st := r.status(svc, id); st {
		case domain.PayoutProcessing:
			started = id
		case domain.PayoutPending:
			left = id
		default:
			t.Fatalf("payout %s: %s", id, st)
		}
	}
	if started == "" || left == "" {
		t.Fatalf("after the pass: started %q, left %q; want one of each", started, left)
	}
	if r.psp.sent() != 2 || r.psp.calls != 2 {
		t.Errorf("%d Pix sent in %d calls, want the earlier one and the started one", r.psp.sent(), r.psp.calls)
	}
	if r.store.batches != 1 || r.store.updates != 0 {
		t.Errorf("%d batch and %d single updates, want the claim's one step in one transaction", r.store.batches, r.store.updates)
	}
	if n := r.events(started, domain.EventWithdrawalStatusChanged); n != 1 {
		t.Errorf("started payout has %d processing events", n)
	}
	if n := r.events(left, domain.EventWithdrawalStatusChanged); n != 0 {
		t.Errorf("the payout left pending has %d processing events", n)
	}
	if st := r.status(svc, sent); st != domain.PayoutProcessing {
		t.Errorf("the payout sent before: %s", st)
	}
	// The next pass, once the leases end, starts the one left.
	r.pass(svc)
	if st := r.status(svc, left); st != domain.PayoutProcessing || r.psp.sent() != 3 {
		t.Errorf("after the next pass: %s, %d Pix sent", st, r.psp.sent())
	}
	r.verify()
}

// logRecords keeps the records logged at error level.
type logRecords struct {
	mu   sync.Mutex
	errs []string
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecords) WithGroup(string) slog.Handler            { return l }
func (l *logRecords) Handle(_ context.Context, rec slog.Record) error {
	if rec.Level < slog.LevelError {
		return nil
	}
	line := rec.Message
	rec.Attrs(func(a slog.Attr) bool { line += fmt.Sprintf(" %s=%v", a.Key, a.Value); return true })
	l.mu.Lock()
	l.errs = append(l.errs, line)
	l.mu.Unlock()
	return nil
}

func (l *logRecords) errors() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.errs...)
}

// TestPayoutStatusErrorsNeverReleaseIt: a processing payout whose status
// query fails — whatever the error, the PSP refusing Quita's credentials
// or the account's Pix-out configuration gone included — stays processing:
// no payout_released entry, no payout.failed, the hold kept. The PSP may
// have paid it; once it answers again, the payout is paid.
func TestPayoutStatusErrorsNeverReleaseIt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		err     error
		blocked bool
	}{
		{"credentials refused", fmt.Errorf("%w: 401 AcessoNegado", ports.ErrAcquirerUnauthorized), true},
		{"not configured for Pix out", fmt.Errorf("%w: no pix_send", ports.ErrAcquirerNotConfigured), true},
		{"the query refused", fmt.Errorf("%w: 400", ports.ErrAcquirerRejected), false},
		{"PSP down", ports.ErrAcquirerUnavailable, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newPayoutRig(t)
			logs := &logRecords{}
			r.log = slog.New(logs)
			_, svc := r.process()
			id := r.sentPayout(svc, "payout-status-err")
			// The PSP pays it; the notification is lost; the credentials
			// stop working before the reconciliation asks.
			r.psp.answer = domain.PayoutPaid
			r.psp.statusErr = tc.err
			for range 3 {
				r.pass(svc)
			}
			if st := r.status(svc, id); st != domain.PayoutProcessing {
				t.Fatalf("status %s, want processing", st)
			}
			if n := r.released(id); n != 0 {
				t.Errorf("%d payout_released entries, want none", n)
			}
			if n := r.events(id, domain.EventPayoutFailed); n != 0 {
				t.Errorf("%d payout.failed events, want none", n)
			}
			if a := r.available(); a != 10000-3050 {
				t.Errorf("available %d, want %d (the hold kept)", a, 10000-3050)
			}
			var blocked uint64
			if tc.blocked {
				blocked = 3
				if errs := logs.errors(); len(errs) != 3 || !strings.Contains(errs[0], "alert=payout_blocked") ||
					!strings.Contains(errs[0], "payout="+domain.PrefixPayout+id) {
					t.Errorf("error logs %q, want one payout_blocked alert per pass naming the payout", errs)
				}
			}
			if got := svc.Alerts(); got.Blocked != blocked || got.Unresolved != 0 {
				t.Errorf("alerts %+v, want %d blocked", got, blocked)
			}
			r.verify()
			// Fixed: the next pass reads the Pix paid.
			r.psp.statusErr = nil
			r.pass(svc)
			if st := r.status(svc, id); st != domain.PayoutPaid || r.released(id) != 0 || r.psp.sent() != 1 {
				t.Errorf("after the fix: %s, %d released, %d Pix; want paid, none, one", st, r.released(id), r.psp.sent())
			}
			r.verify()
		})
	}
}

// TestPayoutFirstSendCredentialErrorKeepsItOpen: the first send's PUT
// meets refused credentials (the PSP may have got an earlier attempt of
// it): the payout stays processing with its hold.
func TestPayoutFirstSendCredentialErrorKeepsItOpen(t *testing.T) {
	t.Parallel()
	for _, err := range []error{ports.ErrAcquirerUnauthorized, ports.ErrAcquirerNotConfigured} {
		t.Run(err.Error(), func(t *testing.T) {
			t.Parallel()
			r := newPayoutRig(t)
			_, svc := r.process()
			resp, cerr := r.create(svc, "payout-first-auth")
			if cerr != nil {
				t.Fatal(cerr)
			}
			id := string(resp.Body)
			r.psp.sendErr = fmt.Errorf("send: %w", err)
			r.psp.statusErr = fmt.Errorf("status: %w", err)
			r.pass(svc)
			r.pass(svc)
			if st := r.status(svc, id); st != domain.PayoutProcessing || r.released(id) != 0 ||
				r.events(id, domain.EventPayoutFailed) != 0 || r.available() != 10000-3050 {
				t.Fatalf("status %s, %d released, available %d; want processing, none, the hold kept", st, r.released(id), r.available())
			}
			if a := svc.Alerts(); a.Blocked != 2 {
				t.Errorf("alerts %+v, want 2 blocked", a)
			}
			r.verify()
		})
	}
}

// TestPayoutDefinitiveAnswersStillRelease: NAO_REALIZADO fails the payout
// and releases its hold (rejected_by_psp); so does a refusal of its very
// first send (nothing at the PSP under its id). A refusal of a later
// re-send does not: an earlier send may have gone out.
func TestPayoutDefinitiveAnswersStillRelease(t *testing.T) {
	t.Parallel()
	released := func(t *testing.T, r *payoutRig, svc *app.PayoutService, id string) {
		t.Helper()
		p, err := svc.Get(context.Background(), r.caller, id)
		if err != nil || p.Status() != domain.PayoutFailed || p.Snapshot().FailureCode != "rejected_by_psp" {
			t.Fatalf("payout %+v %v, want failed rejected_by_psp", p, err)
		}
		if r.released(id) != 1 || r.events(id, domain.EventPayoutFailed) != 1 || r.available() != 10000 {
			t.Errorf("%d released, %d payout.failed, available %d; want 1, 1, 10000", r.released(id),
				r.events(id, domain.EventPayoutFailed), r.available())
		}
		r.verify()
	}
	t.Run("NAO_REALIZADO", func(t *testing.T) {
		t.Parallel()
		r := newPayoutRig(t)
		_, svc := r.process()
		id := r.sentPayout(svc, "payout-nao-realizado")
		r.psp.answer = domain.PayoutFailed
		r.pass(svc)
		released(t, r, svc, id)
	})
	t.Run("first send refused", func(t *testing.T) {
		t.Parallel()
		r := newPayoutRig(t)
		_, svc := r.process()
		resp, err := r.create(svc, "payout-first-refused")
		if err != nil {
			t.Fatal(err)
		}
		r.psp.sendErr = fmt.Errorf("%w: 400 EnvioPixInvalido", ports.ErrAcquirerRejected)
		r.pass(svc)
		released(t, r, svc, string(resp.Body))
	})
	t.Run("re-send refused", func(t *testing.T) {
		t.Parallel()
		r := newPayoutRig(t)
		_, svc := r.process()
		resp, err := r.create(svc, "payout-resend-refused")
		if err != nil {
			t.Fatal(err)
		}
		id := string(resp.Body)
		// The first send's answer is lost (it may have reached the PSP).
		r.psp.sendErr = ports.ErrAcquirerUnavailable
		r.pass(svc)
		// The PSP has no such Pix yet refuses the re-send.
		r.psp.sendErr = fmt.Errorf("%w: 400 EnvioPixInvalido", ports.ErrAcquirerRejected)
		r.pass(svc)
		if st := r.status(svc, id); st != domain.PayoutProcessing || r.released(id) != 0 || r.available() != 10000-3050 {
			t.Fatalf("status %s, %d released; want processing, none", st, r.released(id))
		}
		if a := svc.Alerts(); a.Unresolved != 1 {
			t.Errorf("alerts %+v, want 1 unresolved", a)
		}
		r.verify()
	})
}

// TestPayoutPaidAfterReleaseIsAlerted: the PSP reports paid a payout
// already failed and released: nothing changes (the ledger stays
// consistent), but it is logged at error level and counted, never
// swallowed as a step someone made first.
func TestPayoutPaidAfterReleaseIsAlerted(t *testing.T) {
	t.Parallel()
	r := newPayoutRig(t)
	logs := &logRecords{}
	r.log = slog.New(logs)
	_, svc := r.process()
	id := r.sentPayout(svc, "payout-paid-after-release")
	r.psp.answer = domain.PayoutFailed
	r.pass(svc)
	if st := r.status(svc, id); st != domain.PayoutFailed {
		t.Fatalf("status %s, want failed", st)
	}
	err := app.ApplyPayoutResult(svc, context.Background(), r.caller.Scope(), id,
		ports.PixSendResult{Status: domain.PayoutPaid, EndToEndID: "E12345678202611241200abcdefghijk"})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if a := svc.Alerts(); a.PaidAfterRelease != 1 {
		t.Errorf("alerts %+v, want 1 paid after release", a)
	}
	errs := logs.errors()
	if len(errs) != 1 || !strings.Contains(errs[0], "alert=payout_paid_after_release") || !strings.Contains(errs[0], domain.PrefixPayout+id) {
		t.Errorf("error logs %q, want the paid-after-release alert naming the payout", errs)
	}
	if st := r.status(svc, id); st != domain.PayoutFailed || r.released(id) != 1 {
		t.Errorf("status %s, %d released; want failed, one", st, r.released(id))
	}
	// A step another worker made first (paid twice) stays silent.
	r2 := newPayoutRig(t)
	_, svc2 := r2.process()
	id2 := r2.sentPayout(svc2, "payout-paid-twice")
	r2.psp.answer = domain.PayoutPaid
	r2.pass(svc2)
	if err := app.ApplyPayoutResult(svc2, context.Background(), r2.caller.Scope(), id2,
		ports.PixSendResult{Status: domain.PayoutPaid}); err != nil || svc2.Alerts().PaidAfterRelease != 0 {
		t.Errorf("paid twice: %v, alerts %+v", err, svc2.Alerts())
	}
}
