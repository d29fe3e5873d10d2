package app_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

// receiptsRig is the charge harness with what a live Pix needs around it:
// the expiry worker's listing, the txid lookup, the PSP's received Pix
// (read back by notifications and paged by reconciliation), the receipts
// service and the hosted checkout, all on the harness clock.
type receiptsRig struct {
	*harness
	receipts *app.PixReceiptService
	checkout *app.CheckoutService
	// pix is what the PSP says it received, by end-to-end id.
	pix map[string]ports.ReceivedPix
}

var liveCaller = app.Caller{Account: caller.Account, Mode: domain.ModeLive}

func newReceiptsRig(t *testing.T) *receiptsRig {
	t.Helper()
	h := newHarness(t)
	r := &receiptsRig{harness: h, pix: map[string]ports.ReceivedPix{}}
	h.store.ListOpenExpiredFunc = func(_ context.Context, now time.Time, limit int) ([]ports.ChargeRef, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		var refs []ports.ChargeRef
		for id, c := range h.charges {
			if c.Status().Open() && !c.ExpiresAt().After(now) && len(refs) < limit {
				refs = append(refs, ports.ChargeRef{Scope: ports.Scope{AccountID: c.AccountID(), Mode: c.Mode()}, ID: id})
			}
		}
		return refs, nil
	}
	h.store.GetChargeByIDFunc = func(_ context.Context, id string) (*domain.Charge, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		c, ok := h.charges[id]
		if !ok {
			return nil, ports.ErrNotFound
		}
		return domain.UnmarshalChargeFromStorage(c.Snapshot()), nil
	}
	byTxID := &mocks.AcquirerAccountStoreMock{
		FindChargeByTxIDFunc: func(_ context.Context, s ports.Scope, txid string) (string, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			for id, c := range h.charges {
				if p := c.Pix(); p != nil && p.TxID == txid && c.AccountID() == s.AccountID && c.Mode() == s.Mode {
					return id, nil
				}
			}
			return "", ports.ErrNotFound
		},
	}
	recv := &mocks.PixReceiverMock{
		ReceiverAccountsFunc: func(context.Context) ([]string, error) { return []string{caller.Account.ID}, nil },
		GetPixFunc: func(_ context.Context, _ string, e2e string) (*ports.ReceivedPix, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			p, ok := r.pix[e2e]
			if !ok {
				return nil, ports.ErrNotFound
			}
			return &p, nil
		},
		ListPixFunc: func(_ context.Context, q ports.PixQuery) (ports.PixPage, error) {
			h.mu.Lock()
			defer h.mu.Unlock()
			var pg ports.PixPage
			for _, p := range r.pix {
				if !p.PaidAt.Before(q.Start) && p.PaidAt.Before(q.End) {
					pg.Pix = append(pg.Pix, p)
				}
			}
			return pg, nil
		},
	}
	clock := &mocks.ClockMock{NowFunc: func() time.Time { h.clockMu.Lock(); defer h.clockMu.Unlock(); return h.now }}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	r.receipts = app.NewPixReceiptService(h.svc, byTxID, &memMarks{m: map[string]time.Time{}}, recv, clock, log, app.PixReceiptsConfig{})
	accounts := &mocks.AccountStoreMock{GetAccountFunc: func(_ context.Context, id string) (*domain.Account, error) {
		return &domain.Account{ID: id, Name: "Loja"}, nil
	}}
	r.checkout = app.NewCheckoutService(h.svc, accounts, clock, app.ChargesConfig{})
	return r
}

// createLive creates a live Pix charge of 60 s and returns its raw id and
// its expires_at.
func (r *receiptsRig) createLive(t *testing.T, key string) (string, time.Time) {
	t.Helper()
	ttl := int64(60)
	resp, err := r.svc.Create(context.Background(), liveCaller,
		app.CreateChargeInput{Amount: 2500, ExpiresIn: &ttl, Methods: []domain.Method{domain.MethodPix}},
		app.Idempotency{Key: key, Fingerprint: "fp-" + key}, render)
	if err != nil {
		t.Fatal(err)
	}
	id := chargeID(t, resp.Body)
	c := r.stored(id)
	return id, c.ExpiresAt()
}

// setNow moves the harness clock to at.
func (r *receiptsRig) setNow(at time.Time) {
	r.clockMu.Lock()
	defer r.clockMu.Unlock()
	r.now = at
}

func (r *receiptsRig) stored(id string) *domain.Charge {
	r.mu.Lock()
	defer r.mu.Unlock()
	return domain.UnmarshalChargeFromStorage(r.charges[id].Snapshot())
}

// received makes the PSP hold a Pix for the charge, paid at paidAt.
func (r *receiptsRig) received(id, e2e string, paidAt time.Time) {
	c := r.stored(id)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pix[e2e] = ports.ReceivedPix{EndToEndID: e2e, TxID: c.Pix().TxID, Amount: c.Amount(), PaidAt: paidAt}
}

func (r *receiptsRig) eventTypes(id string) []domain.EventType {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []domain.EventType
	for _, e := range r.events {
		if e.ChargeID == id {
			out = append(out, e.Type)
		}
	}
	return out
}

// deliver brings the Pix to Quita the way the case says: the PSP's
// notification, or the reconciliation pass that finds a lost one.
type deliver func(t *testing.T, r *receiptsRig, e2e string)

var byNotification deliver = func(t *testing.T, r *receiptsRig, e2e string) {
	t.Helper()
	if _, err := r.receipts.Notify(context.Background(), caller.Account.ID, []string{e2e}); err != nil {
		t.Fatalf("notify: %v", err)
	}
}

var byReconciliation deliver = func(t *testing.T, r *receiptsRig, _ string) {
	t.Helper()
	if _, err := r.receipts.Reconcile(context.Background()); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
}

// A Pix paid 5 s before expires_at whose news comes after it — after the
// expiry worker ran and the payer's checkout asked at countdown zero —
// settles the charge: paid, credited, charge.paid, nothing returned.
func TestPixPaidInTimeSettlesAfterExpiresAt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		deliver deliver
		// after is how long after expires_at the news arrives.
		after time.Duration
	}{
		{"notification 1 s late", byNotification, time.Second},
		{"notification just inside the grace", byNotification, app.DefaultExpiryGrace - time.Second},
		{"lost notification found by reconciliation", byReconciliation, 70 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newReceiptsRig(t)
			ctx := context.Background()
			id, expiresAt := r.createLive(t, "grace-"+tc.name)
			const e2e = "E12345678202611221200graceok0001"
			r.received(id, e2e, expiresAt.Add(-5*time.Second))

			r.setNow(expiresAt.Add(tc.after))
			if n, err := r.svc.ExpireDue(ctx); err != nil || n != 0 {
				t.Fatalf("expiry worker in the grace: expired %d, %v; want none", n, err)
			}
			st, err := r.checkout.Status(ctx, id)
			if err != nil || st.Status != domain.StatusPending || !st.ExpiresAt.Equal(expiresAt) {
				t.Fatalf("checkout at countdown zero: %+v, %v; want pending with the original expires_at", st, err)
			}
			if c, err := r.svc.Get(ctx, liveCaller, id); err != nil || c.Status() != domain.TxWaitingPayment {
				t.Fatalf("merchant read in the grace: %v, %v; want pending", c.Status(), err)
			}

			tc.deliver(t, r, e2e)

			c := r.stored(id)
			if c.Status() != domain.TxPaid || !c.Credited() || c.Settlement().EndToEndID != e2e {
				t.Fatalf("after the late news: %s, credited %v; want PAID and credited", c.Status(), c.Credited())
			}
			r.mu.Lock()
			entries := len(r.entries)
			r.mu.Unlock()
			if entries != 1 {
				t.Errorf("%d ledger entries, want the one crediting the merchant", entries)
			}
			if n := len(r.acquirer.ReturnPixCalls()); n != 0 {
				t.Errorf("%d devoluções of a Pix paid in time", n)
			}
			evs := r.eventTypes(id)
			if !slices.Contains(evs, domain.EventChargePaid) || slices.Contains(evs, domain.EventChargeExpired) {
				t.Errorf("events %v; want charge.paid and no charge.expired", evs)
			}

			// Past the grace the worker leaves the paid charge alone.
			r.advance(app.DefaultExpiryGrace)
			if n, err := r.svc.ExpireDue(ctx); err != nil || n != 0 || r.stored(id).Status() != domain.TxPaid {
				t.Errorf("worker after the grace: expired %d, %v, status %s", n, err, r.stored(id).Status())
			}
		})
	}
}

// What the grace does not change: a Pix paid at or after expires_at is
// returned whenever it is reported, and news of a Pix paid in time that
// comes only after the grace meets an expired charge and is returned.
func TestPixAfterExpiryIsReturned(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		deliver deliver
		// paid and after are the Pix's time and the news's, from expires_at.
		paid, after time.Duration
		want        domain.TxStatus
	}{
		{"paid in time, reported after the grace", byNotification, -5 * time.Second, app.DefaultExpiryGrace + time.Second, domain.TxExpired},
		{"paid in time, found by reconciliation after the grace", byReconciliation, -5 * time.Second, app.DefaultExpiryGrace + time.Minute, domain.TxExpired},
		{"paid at expires_at, reported in the grace", byNotification, 0, 2 * time.Second, domain.TxWaitingPayment},
		{"paid after expires_at, reported in the grace", byNotification, 2 * time.Second, 4 * time.Second, domain.TxWaitingPayment},
		{"paid after expires_at, reported after the grace", byNotification, 2 * time.Second, app.DefaultExpiryGrace + time.Second, domain.TxExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := newReceiptsRig(t)
			ctx := context.Background()
			id, expiresAt := r.createLive(t, "late-"+tc.name)
			const e2e = "E12345678202611221201latepix0001"
			r.received(id, e2e, expiresAt.Add(tc.paid))

			r.setNow(expiresAt.Add(tc.after))
			if _, err := r.svc.ExpireDue(ctx); err != nil {
				t.Fatal(err)
			}
			tc.deliver(t, r, e2e)

			c := r.stored(id)
			if c.Status() != tc.want || c.Credited() {
				t.Fatalf("status %s, credited %v; want %s, not credited", c.Status(), c.Credited(), tc.want)
			}
			calls := r.acquirer.ReturnPixCalls()
			if len(calls) != 1 || calls[0].Req.EndToEndID != e2e || calls[0].Req.Amount != c.Amount() {
				t.Fatalf("devoluções %+v; want the whole Pix returned once", calls)
			}
			if evs := r.eventTypes(id); slices.Contains(evs, domain.EventChargePaid) {
				t.Errorf("events %v; want no charge.paid", evs)
			}
			// The Pix is payer funds from its arrival until its return is
			// confirmed; the merchant is never credited.
			r.mu.Lock()
			var kinds []domain.EntryKind
			for _, e := range r.entries {
				kinds = append(kinds, e.Kind)
			}
			r.mu.Unlock()
			if !slices.Equal(kinds, []domain.EntryKind{domain.EntryPayerFundsReceived, domain.EntryPayerFundsReturned}) {
				t.Errorf("ledger entries %v for a returned Pix; want payer funds received, then returned", kinds)
			}

			// A charge left open in the grace expires when the grace ends.
			r.advance(app.DefaultExpiryGrace + time.Second)
			if _, err := r.svc.ExpireDue(ctx); err != nil {
				t.Fatal(err)
			}
			if s := r.stored(id).Status(); s != domain.TxExpired {
				t.Errorf("after the grace: %s, want EXPIRED", s)
			}
			if evs := r.eventTypes(id); !slices.Contains(evs, domain.EventChargeExpired) {
				t.Errorf("events %v; want charge.expired", evs)
			}
		})
	}
}

// The expire test helper still closes a charge at once, grace or not, and
// the sandbox pays nothing past expires_at.
func TestExpireHelperAndSandboxPayIgnoreTheGrace(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	ttl := int64(60)
	resp, err := h.create(t, app.CreateChargeInput{Amount: 500, ExpiresIn: &ttl}, "helper-01")
	if err != nil {
		t.Fatal(err)
	}
	now := chargeID(t, resp.Body)
	if c, err := h.svc.ExpireTestCharge(ctx, caller, now); err != nil || c.Status() != domain.TxExpired {
		t.Fatalf("expire helper before expires_at: %v, %v", c.Status(), err)
	}

	resp, err = h.create(t, app.CreateChargeInput{Amount: 500, ExpiresIn: &ttl}, "helper-02")
	if err != nil {
		t.Fatal(err)
	}
	late := chargeID(t, resp.Body)
	h.advance(61 * time.Second)
	sim := &mocks.PaymentSimulatorMock{}
	if _, err := h.svc.SimulatePayment(ctx, sim, caller, late, app.PayInput{}); !errors.Is(err, domain.ErrChargeExpired) {
		t.Errorf("sandbox payment in the grace: %v, want ErrChargeExpired", err)
	}
	if len(sim.SimulatePixPaymentCalls()) != 0 {
		t.Error("the sandbox bank paid a cob past its expiry")
	}
	if c, err := h.svc.ExpireTestCharge(ctx, caller, late); err != nil || c.Status() != domain.TxExpired {
		t.Errorf("expire helper in the grace: %v, %v", c.Status(), err)
	}
}
