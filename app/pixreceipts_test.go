package app_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

// fakePSP is an API Pix provider as reconciliation sees it: it lists the
// Pix it received between inicio and fim, two a page, and its listing can
// be made to fail (the account's credentials refused).
type fakePSP struct {
	mu      sync.Mutex
	pix     []ports.ReceivedPix
	refused bool
	asked   []ports.PixQuery
}

func (f *fakePSP) receiver(acct string) *mocks.PixReceiverMock {
	return &mocks.PixReceiverMock{
		ReceiverAccountsFunc: func(context.Context) ([]string, error) { return []string{acct}, nil },
		ListPixFunc: func(_ context.Context, q ports.PixQuery) (ports.PixPage, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.asked = append(f.asked, q)
			if f.refused {
				return ports.PixPage{}, fmt.Errorf("%w: the PSP refused Quita's OAuth2 client credentials (401)", ports.ErrAcquirerRejected)
			}
			var in []ports.ReceivedPix
			for _, p := range f.pix {
				if !p.PaidAt.Before(q.Start) && !p.PaidAt.After(q.End) {
					in = append(in, p)
				}
			}
			const per = 2
			from := min(q.Page*per, len(in))
			to := min(from+per, len(in))
			return ports.PixPage{Pix: in[from:to], More: to < len(in)}, nil
		},
	}
}

func (f *fakePSP) set(refused bool) {
	f.mu.Lock()
	f.refused = refused
	f.mu.Unlock()
}

func (f *fakePSP) receive(p ports.ReceivedPix) {
	f.mu.Lock()
	f.pix = append(f.pix, p)
	f.mu.Unlock()
}

// queries returns and forgets the listings asked so far.
func (f *fakePSP) queries() []ports.PixQuery {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.asked
	f.asked = nil
	return q
}

// memMarks keeps reconciliation marks in memory, forward only, as the
// store does.
type memMarks struct {
	mu sync.Mutex
	m  map[string]time.Time
}

func (m *memMarks) PixReconciledThrough(_ context.Context, acct string) (time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.m[acct], nil
}

func (m *memMarks) SetPixReconciledThrough(_ context.Context, acct string, t time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t.After(m.m[acct]) {
		m.m[acct] = t
	}
	return nil
}

// receiptsEnv is a PixReceiptService over the charge harness, a fake PSP
// and in-memory marks, all on the harness's clock.
type receiptsEnv struct {
	h     *harness
	psp   *fakePSP
	marks *memMarks
	svc   *app.PixReceiptService
	live  app.Caller
}

func newReceiptsEnv(t *testing.T, cfg app.PixReceiptsConfig) *receiptsEnv {
	t.Helper()
	h := newHarness(t)
	live := caller
	live.Mode = domain.ModeLive
	e := &receiptsEnv{h: h, psp: &fakePSP{}, marks: &memMarks{m: map[string]time.Time{}}, live: live}
	txids := &mocks.AcquirerAccountStoreMock{FindChargeByTxIDFunc: func(_ context.Context, s ports.Scope, txid string) (string, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		for id, c := range h.charges {
			if c.AccountID() == s.AccountID && c.Mode() == s.Mode && c.Pix() != nil && c.Pix().TxID == txid {
				return id, nil
			}
		}
		return "", ports.ErrNotFound
	}}
	clock := &mocks.ClockMock{NowFunc: func() time.Time { h.clockMu.Lock(); defer h.clockMu.Unlock(); return h.now }}
	e.svc = app.NewPixReceiptService(h.svc, txids, e.marks, e.psp.receiver(live.Account.ID), clock,
		slog.New(slog.NewTextHandler(io.Discard, nil)), cfg)
	return e
}

// charge creates a live Pix charge payable for 24 h and returns its raw id
// and txid.
func (e *receiptsEnv) charge(t *testing.T, key string) (id, txid string) {
	t.Helper()
	day := int64(86400)
	resp, err := e.h.svc.Create(context.Background(), e.live, app.CreateChargeInput{Amount: 2500, Methods: []domain.Method{domain.MethodPix}, ExpiresIn: &day},
		app.Idempotency{Key: key, Fingerprint: "fp-" + key}, render)
	if err != nil {
		t.Fatal(err)
	}
	return chargeID(t, resp.Body), domain.DeriveTxID(e.live.Account.ID, string(domain.ModeLive), key)
}

func (e *receiptsEnv) now() time.Time {
	e.h.clockMu.Lock()
	defer e.h.clockMu.Unlock()
	return e.h.now
}

// events counts the charge's events of type typ.
func (e *receiptsEnv) events(id string, typ domain.EventType) int {
	e.h.mu.Lock()
	defer e.h.mu.Unlock()
	n := 0
	for _, ev := range e.h.events {
		if ev.ChargeID == id && ev.Type == typ {
			n++
		}
	}
	return n
}

func (e *receiptsEnv) stored(t *testing.T, id string) *domain.Charge {
	t.Helper()
	e.h.mu.Lock()
	defer e.h.mu.Unlock()
	return e.h.charges[id]
}

// spans checks that the first pages of qs cover from..to in consecutive
// spans of at most most, oldest first.
func spans(t *testing.T, qs []ports.PixQuery, from, to time.Time, most time.Duration) {
	t.Helper()
	at := from
	for _, q := range qs {
		if q.Page != 0 {
			continue
		}
		if !q.Start.Equal(at) || q.End.Sub(q.Start) > most || q.End.After(to) {
			t.Fatalf("span %s..%s, want one from %s of at most %s (asked %+v)", q.Start, q.End, at, most, qs)
		}
		at = q.End
	}
	if !at.Equal(to) {
		t.Fatalf("the spans end at %s, want %s (asked %+v)", at, to, qs)
	}
}

// The account's credentials are refused for 3 hours — longer than the 2 h
// a pass reads again — and the PSP's callbacks are refused meanwhile. A Pix
// received half an hour into the outage is applied by the first pass that
// can list again: it reads from the last complete pass, in spans of at
// most QueryRange, and applies the Pix once.
func TestReconcileCatchesUpAfterACredentialOutage(t *testing.T) {
	t.Parallel()
	e := newReceiptsEnv(t, app.PixReceiptsConfig{QueryRange: time.Hour})
	start := e.now()
	if n, err := e.svc.Reconcile(t.Context()); n != 0 || err != nil {
		t.Fatalf("first pass: %d, %v", n, err)
	}
	e.psp.queries()
	id, txid := e.charge(t, "outage")

	e.psp.set(true)
	const e2e = "E12345678202611221230outage00001"
	for elapsed := time.Duration(0); elapsed < 3*time.Hour; elapsed += 10 * time.Minute {
		if elapsed == 30*time.Minute {
			e.psp.receive(ports.ReceivedPix{EndToEndID: e2e, TxID: txid, Amount: 2500, PaidAt: e.now()})
		}
		e.h.advance(10 * time.Minute)
		if _, err := e.svc.Reconcile(t.Context()); !errors.Is(err, ports.ErrAcquirerRejected) {
			t.Fatalf("pass at +%s while the credentials are refused: %v", elapsed+10*time.Minute, err)
		}
	}
	if c := e.stored(t, id); c.Status() != domain.TxWaitingPayment {
		t.Fatalf("during the outage the charge is %s", c.Status())
	}
	e.psp.queries()

	e.psp.set(false)
	n, err := e.svc.Reconcile(t.Context())
	if err != nil || n != 1 {
		t.Fatalf("pass after the outage applied %d, %v; want the Pix of +30m", n, err)
	}
	c := e.stored(t, id)
	if st := c.Settlement(); c.Status() != domain.TxPaid || st == nil || st.EndToEndID != e2e {
		t.Fatalf("after the outage the charge is %s, settlement %+v", c.Status(), c.Settlement())
	}
	// It read from 2 h before the last complete pass up to now, in
	// consecutive spans of at most an hour.
	now := e.now()
	spans(t, e.psp.queries(), start.Add(-2*time.Hour), now, time.Hour)
	// The next pass reads the usual look-back only and applies nothing again.
	e.h.advance(time.Minute)
	if n, err := e.svc.Reconcile(t.Context()); n != 0 || err != nil {
		t.Fatalf("next pass: %d, %v", n, err)
	}
	spans(t, e.psp.queries(), now.Add(-2*time.Hour), e.now(), time.Hour)
	if events := e.events(id, domain.EventChargePaid); events != 1 {
		t.Fatalf("%d charge.paid events, want 1", events)
	}
}

// A pass never reads further back than MaxCatchUp, however old the last
// complete pass; while a span cannot be listed, the mark does not move.
func TestReconcileCatchUpIsBounded(t *testing.T) {
	t.Parallel()
	e := newReceiptsEnv(t, app.PixReceiptsConfig{MaxCatchUp: 6 * time.Hour})
	if _, err := e.svc.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.psp.set(true)
	e.h.advance(10 * time.Hour)
	if _, err := e.svc.Reconcile(t.Context()); err == nil {
		t.Fatal("a refused listing reconciled")
	}
	e.psp.queries()
	e.psp.set(false)
	e.h.advance(time.Hour)
	if _, err := e.svc.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	spans(t, e.psp.queries(), e.now().Add(-6*time.Hour), e.now(), 24*time.Hour)
}

// A Pix of the wrong amount that the acquirer reports as partly given back
// already owes a return of the rest only: asking for the whole would be
// refused by the PSP on every attempt.
func TestWrongAmountReturnOwesOnlyTheRest(t *testing.T) {
	t.Parallel()
	e := newReceiptsEnv(t, app.PixReceiptsConfig{})
	id, txid := e.charge(t, "partly-returned")
	const e2e = "E12345678202611221230partly00001"
	e.psp.receive(ports.ReceivedPix{EndToEndID: e2e, TxID: txid, Amount: 1000, Returned: 400, PaidAt: e.now()})
	if _, err := e.svc.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	e.h.mu.Lock()
	r, ok := e.h.returns[e2e]
	e.h.mu.Unlock()
	if !ok || r.Amount != 600 || r.ChargeID != id || r.Reason != domain.ReturnForWrongAmount {
		t.Fatalf("return owed %+v (recorded %v), want 600 of the wrong-amount Pix to %s", r, ok, id)
	}
}
