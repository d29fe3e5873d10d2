package app_test

import (
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

// revisingAcquirer is the harness's acquirer with due-date charges and
// their revision: revise sees each revision the service sends.
type revisingAcquirer struct {
	*mocks.AcquirerMock
	mu     sync.Mutex
	sent   []domain.DueTerms
	revise func(ports.ReviseDueChargeRequest) error
}

func (a *revisingAcquirer) SupportsDueDate(ports.Scope) bool { return true }

func (a *revisingAcquirer) ReviseDueCharge(_ context.Context, req ports.ReviseDueChargeRequest) error {
	a.mu.Lock()
	a.sent = append(a.sent, req.Due)
	hook := a.revise
	a.mu.Unlock()
	if hook != nil {
		return hook(req)
	}
	return nil
}

func (a *revisingAcquirer) calls() []domain.DueTerms {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]domain.DueTerms(nil), a.sent...)
}

// newReviseHarness is the harness over a revisingAcquirer, with one
// due-date charge created: R$ 100.00 due in ten days with a R$ 2.00 fine.
func newReviseHarness(t *testing.T) (*harness, *revisingAcquirer, string) {
	t.Helper()
	h := newHarness(t)
	acq := &revisingAcquirer{AcquirerMock: h.acquirer}
	clock := &mocks.ClockMock{NowFunc: func() time.Time { h.clockMu.Lock(); defer h.clockMu.Unlock(); return h.now }}
	ids := &mocks.IDGeneratorMock{NewIDFunc: func() (string, error) { return domain.NewRawID(rand.Reader) }}
	log := slog.New(slog.NewJSONHandler(h.logs, nil))
	h.svc = app.NewChargeService(h.store, exactlyonce.NewDatabaseChecked(h.records, h.cache, clock, ids, log, exactlyonce.Config{}),
		acq, nil, clock, ids, log, app.ChargesConfig{Links: domain.Links{CheckoutBase: "https://pay.example.com/c"}})
	resp, err := h.create(t, app.CreateChargeInput{Amount: 10_000, Currency: "BRL", StrictDocument: true,
		Customer: domain.Customer{Name: "Maria Silva", Document: "52998224725"},
		Due: &domain.DueTermsParams{Due: domain.BrasiliaDate(t0).AddDays(10),
			Fine: &domain.Fine{Type: domain.FineFixed, Amount: 200}}}, "revise-create-1")
	if err != nil {
		t.Fatal(err)
	}
	return h, acq, chargeID(t, resp.Body)
}

func (h *harness) stored(t *testing.T, id string) *domain.Charge {
	t.Helper()
	c, err := h.store.GetCharge(context.Background(), caller.Scope(), id)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func fineOf(c *domain.Charge) int64 {
	terms, _ := c.DueTerms()
	if f := terms.Params().Fine; f != nil {
		return f.Amount
	}
	return 0
}

func fineRevision(amount int64) domain.DueRevision {
	return domain.DueRevision{Fine: domain.ReplaceRule(domain.Fine{Type: domain.FineFixed, Amount: amount})}
}

// A revision goes to the acquirer with the whole of the new terms, then is
// committed with no event; the same revision again changes nothing and
// asks the acquirer nothing.
func TestReviseCarriesTheTermsToTheAcquirerThenCommits(t *testing.T) {
	t.Parallel()
	h, acq, id := newReviseHarness(t)
	events := len(h.events)
	c, err := h.svc.ReviseDueTerms(context.Background(), caller, id, fineRevision(500))
	if err != nil || fineOf(c) != 500 || fineOf(h.stored(t, id)) != 500 {
		t.Fatalf("ReviseDueTerms: fine %d stored %d, %v; want 500", fineOf(c), fineOf(h.stored(t, id)), err)
	}
	sent := acq.calls()
	if stored, _ := h.stored(t, id).DueTerms(); len(sent) != 1 || !sent[0].Equal(stored) {
		t.Fatalf("the acquirer was sent %d revisions, want the stored terms once", len(sent))
	}
	if len(h.events) != events {
		t.Errorf("a revision wrote %d events", len(h.events)-events)
	}
	if _, err := h.svc.ReviseDueTerms(context.Background(), caller, id, fineRevision(500)); err != nil || len(acq.calls()) != 1 {
		t.Errorf("the same revision again: %v, %d calls to the acquirer; want none more", err, len(acq.calls()))
	}
	if _, err := h.svc.ReviseDueTerms(context.Background(), caller, id, domain.DueRevision{DaysAfterDue: new(int)}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.svc.ReviseDueTerms(context.Background(), caller, id, domain.DueRevision{DaysAfterDue: ptrTo(-1)}); !errors.Is(err, domain.ErrValidation) || len(acq.calls()) != 2 {
		t.Errorf("an invalid revision: %v after %d calls, want a validation error before the acquirer", err, len(acq.calls()))
	}
}

func ptrTo[T any](v T) *T { return &v }

// A payment settled while the acquirer was being revised is never
// overwritten: the commit finds the charge paid and the revision ends
// with ErrChargeNotRevisable.
func TestReviseNeverOverwritesAPaymentMadeMeanwhile(t *testing.T) {
	t.Parallel()
	h, acq, id := newReviseHarness(t)
	acq.revise = func(ports.ReviseDueChargeRequest) error {
		_, err := h.svc.ApplyPixPayment(context.Background(), caller.Scope(), id, domain.PixPayment{
			EndToEndID: "E00000000202611221300revisepaid01", Amount: 10_000, PaidAt: t0.Add(time.Minute)})
		return err
	}
	_, err := h.svc.ReviseDueTerms(context.Background(), caller, id, fineRevision(500))
	if !errors.Is(err, domain.ErrChargeNotRevisable) {
		t.Fatalf("ReviseDueTerms: %v, want ErrChargeNotRevisable", err)
	}
	c := h.stored(t, id)
	if c.Status() != domain.TxPaid || fineOf(c) != 200 || c.Settlement() == nil {
		t.Errorf("stored charge %s with fine %d, want the payment kept and the terms as they were", c.Status(), fineOf(c))
	}
}

// The acquirer accepted and the commit failed: the next identical
// revision sends the acquirer the same terms again and commits them.
func TestReviseConvergesAfterACommitFailed(t *testing.T) {
	t.Parallel()
	h, acq, id := newReviseHarness(t)
	h.mu.Lock()
	h.beforeWrite = func(ports.ChargeChange) error { return ports.ErrStoreUnavailable }
	h.mu.Unlock()
	if _, err := h.svc.ReviseDueTerms(context.Background(), caller, id, fineRevision(500)); !errors.Is(err, ports.ErrStoreUnavailable) {
		t.Fatalf("ReviseDueTerms with the database down: %v", err)
	}
	if fineOf(h.stored(t, id)) != 200 {
		t.Fatal("a failed commit changed the stored terms")
	}
	h.mu.Lock()
	h.beforeWrite = nil
	h.mu.Unlock()
	if _, err := h.svc.ReviseDueTerms(context.Background(), caller, id, fineRevision(500)); err != nil {
		t.Fatal(err)
	}
	sent, stored := acq.calls(), h.stored(t, id)
	terms, _ := stored.DueTerms()
	if fineOf(stored) != 500 || len(sent) != 2 || !sent[0].Equal(sent[1]) || !sent[1].Equal(terms) {
		t.Errorf("after the retry: fine %d, %d revisions sent; want 500 and the same terms sent twice", fineOf(stored), len(sent))
	}
}

// Another revision committed while this one was at the acquirer: this one
// is computed again from the committed terms and sent again, so the
// acquirer's last terms are the ones committed, with both revisions in.
func TestReviseRecomputesAfterAnotherCommittedFirst(t *testing.T) {
	t.Parallel()
	h, acq, id := newReviseHarness(t)
	var other atomic.Bool
	acq.revise = func(ports.ReviseDueChargeRequest) error {
		if other.Swap(true) {
			return nil
		}
		_, err := h.svc.ReviseDueTerms(context.Background(), caller, id, domain.DueRevision{DaysAfterDue: ptrTo(3)})
		return err
	}
	c, err := h.svc.ReviseDueTerms(context.Background(), caller, id, fineRevision(500))
	if err != nil {
		t.Fatal(err)
	}
	terms, _ := c.DueTerms()
	sent := acq.calls()
	if fineOf(c) != 500 || *terms.Params().DaysAfterDue != 3 || !sent[len(sent)-1].Equal(terms) {
		t.Errorf("committed fine %d, days after due %d; want both revisions, and the acquirer's last terms to be them", fineOf(c), *terms.Params().DaysAfterDue)
	}
	if len(sent) != 3 {
		t.Errorf("%d revisions sent, want 3 (this one, the other, this one again)", len(sent))
	}
}

// The acquirer refuses because the charge was paid meanwhile at the PSP:
// the answer is the charge's state, not the acquirer's refusal.
func TestReviseRefusedByTheAcquirerForAPaidCharge(t *testing.T) {
	t.Parallel()
	h, acq, id := newReviseHarness(t)
	acq.revise = func(ports.ReviseDueChargeRequest) error {
		if _, err := h.svc.ApplyPixPayment(context.Background(), caller.Scope(), id, domain.PixPayment{
			EndToEndID: "E00000000202611221300revisepaid02", Amount: 10_000, PaidAt: t0.Add(time.Minute)}); err != nil {
			return err
		}
		return ports.ErrAcquirerRejected
	}
	if _, err := h.svc.ReviseDueTerms(context.Background(), caller, id, fineRevision(500)); !errors.Is(err, domain.ErrChargeNotRevisable) {
		t.Fatalf("ReviseDueTerms: %v, want ErrChargeNotRevisable", err)
	}
	acq.revise = func(ports.ReviseDueChargeRequest) error { return ports.ErrAcquirerRejected }
	h2, acq2, id2 := newReviseHarness(t)
	acq2.revise = acq.revise
	if _, err := h2.svc.ReviseDueTerms(context.Background(), caller, id2, fineRevision(500)); !errors.Is(err, ports.ErrAcquirerRejected) {
		t.Errorf("a refusal of a pending charge: %v, want the acquirer's refusal", err)
	}
}
