package e2e_test

import (
	"bytes"
	"context"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/ports"
)

// endToEndID is E + 8-digit ISPB + yyyyMMddHHmm + 11 alphanumerics.
var endToEndID = regexp.MustCompile(`^E[0-9]{8}[0-9]{12}[A-Za-z0-9]{11}$`)

func assertEndToEndID(t *testing.T, id string) {
	t.Helper()
	if len(id) != 32 || !endToEndID.MatchString(id) {
		t.Errorf("end_to_end_id %q: want 32 characters, E + ISPB + yyyyMMddHHmm + 11 alphanumerics", id)
	}
}

// returnsFor lists the returns the sandbox accepted for one charge.
func (e *env) returnsFor(rawID string) []ports.ReturnPixRequest {
	var out []ports.ReturnPixRequest
	for _, r := range e.srv.Sandbox.Returns() {
		if r.ChargeID == rawID {
			out = append(out, r)
		}
	}
	return out
}

// Settlement outcomes under the payer lock, underpayment and the expire
// helper.
func TestSettlementOutcomes(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b)
		a := e.newAccount(t, "Loja Lock")
		locked := func(t *testing.T) charge {
			return a.test.mustCreate(t, map[string]any{
				"amount": 5000, "payment_method": "pix",
				"customer":              map[string]any{"name": "Joao Souza", "document": "52998224725"},
				"expected_payer_tax_id": "529.982.247-25",
			})
		}

		t.Run("matching document pays", func(t *testing.T) {
			c := locked(t)
			if c.ExpectedPayerTaxID != "52998224725" {
				t.Errorf("expected_payer_tax_id echoed as %q", c.ExpectedPayerTaxID)
			}
			p := a.test.pay(t, c.ID, map[string]any{"payer_document": "529.982.247-25", "payer_name": "Joao Souza"}).want(t, http.StatusOK).charge(t)
			if p.Status != "paid" {
				t.Fatalf("status %q, want paid", p.Status)
			}
			assertEndToEndID(t, p.Settlement["end_to_end_id"])
			if got := e.returnsFor(c.raw()); len(got) != 0 {
				t.Errorf("a matching payer was returned money: %+v", got)
			}
		})

		t.Run("other document is refunded", func(t *testing.T) {
			c := locked(t)
			p := a.test.pay(t, c.ID, map[string]any{"payer_document": "111.444.777-35"}).want(t, http.StatusOK).charge(t)
			if p.Status != "refunded" {
				t.Fatalf("status %q, want refunded", p.Status)
			}
			if len(p.Settlement) != 0 {
				t.Errorf("a refunded payment shows settlement %v", p.Settlement)
			}
			rets := e.returnsFor(c.raw())
			if len(rets) != 1 {
				t.Fatalf("sandbox returns for the charge: %+v, want exactly one", rets)
			}
			assertEndToEndID(t, rets[0].EndToEndID)
			if rets[0].Amount != 5000 || rets[0].ReturnID == "" {
				t.Errorf("return %+v, want the full 5000 with an id", rets[0])
			}
			// The return is addressed by the payment's end-to-end id, and
			// recorded as done.
			var paidBy, returnState string
			err := e.srv.App.DB.Bun().NewSelect().Table("charges").Column("settlement_end_to_end_id", "return_state").
				Where("id = ?", c.raw()).Scan(context.Background(), &paidBy, &returnState)
			if err != nil || paidBy != rets[0].EndToEndID || returnState == "requested" {
				t.Errorf("stored payment %q return state %q (%v); the return went to %q", paidBy, returnState, err, rets[0].EndToEndID)
			}
			if g := a.test.get(t, c.ID).want(t, http.StatusOK).charge(t); g.Status != "refunded" {
				t.Errorf("read after refund: %q", g.Status)
			}
		})

		t.Run("undisclosed document is held for review", func(t *testing.T) {
			c := locked(t)
			p := a.test.pay(t, c.ID, map[string]any{}).want(t, http.StatusOK).charge(t)
			if p.Status != "processing" || len(p.Settlement) != 0 {
				t.Fatalf("status %q settlement %v, want processing with {}", p.Status, p.Settlement)
			}
			if g := a.test.get(t, c.ID).want(t, http.StatusOK).charge(t); g.Status != "processing" {
				t.Errorf("read after review hold: %q", g.Status)
			}
			if got := e.returnsFor(c.raw()); len(got) != 0 {
				t.Errorf("a held payment was returned: %+v", got)
			}
		})

		t.Run("no lock pays whoever pays", func(t *testing.T) {
			c := a.test.mustCreate(t, pixBody(700))
			p := a.test.pay(t, c.ID, map[string]any{"payer_document": "11144477735"}).want(t, http.StatusOK).charge(t)
			if p.Status != "paid" {
				t.Fatalf("status %q, want paid", p.Status)
			}
		})

		t.Run("underpayment stays pending and is returned", func(t *testing.T) {
			c := a.test.mustCreate(t, pixBody(1000))
			p := a.test.pay(t, c.ID, map[string]any{"amount": 999}).want(t, http.StatusOK).charge(t)
			if p.Status != "pending" || len(p.Settlement) != 0 {
				t.Fatalf("status %q settlement %v, want pending with {}", p.Status, p.Settlement)
			}
			rets := e.returnsFor(c.raw())
			if len(rets) != 1 || rets[0].Amount != 999 {
				t.Fatalf("returns %+v, want one of 999", rets)
			}
			assertEndToEndID(t, rets[0].EndToEndID)
			// An overpayment is returned too; the exact amount then pays.
			a.test.pay(t, c.ID, map[string]any{"amount": 1001}).want(t, http.StatusOK)
			if g := a.test.get(t, c.ID).want(t, http.StatusOK).charge(t); g.Status != "pending" {
				t.Fatalf("after overpayment: %q, want pending", g.Status)
			}
			if n := len(e.returnsFor(c.raw())); n != 2 {
				t.Errorf("%d returns, want 2", n)
			}
			if s := a.test.pay(t, c.ID, map[string]any{"amount": 1000}).want(t, http.StatusOK).charge(t).Status; s != "paid" {
				t.Errorf("exact amount after underpayment: %q, want paid", s)
			}
		})

		t.Run("expire helper", func(t *testing.T) {
			c := a.test.mustCreate(t, pixBody(1000))
			x := a.test.do(t, http.MethodPost, "/test_helpers/charges/"+c.ID+"/expire", nil, nil).want(t, http.StatusOK).charge(t)
			if x.Status != "expired" {
				t.Fatalf("expire: %q", x.Status)
			}
			if g := a.test.get(t, c.raw()).want(t, http.StatusOK).charge(t); g.Status != "expired" {
				t.Errorf("read after expire: %q", g.Status)
			}
			a.test.pay(t, c.ID, nil).apiErr(t, http.StatusConflict, "charge_expired", "")
			if s := a.test.get(t, c.ID).want(t, http.StatusOK).charge(t).Status; s != "expired" {
				t.Errorf("paying an expired charge changed it to %q", s)
			}
		})

		t.Run("pay helper validates", func(t *testing.T) {
			c := a.test.mustCreate(t, pixBody(1000))
			a.test.pay(t, c.ID, map[string]any{"amount": 0}).apiErr(t, http.StatusBadRequest, "", "amount")
			a.test.pay(t, c.ID, map[string]any{"payer_document": "123"}).apiErr(t, http.StatusBadRequest, "", "payer_document")
			a.test.pay(t, c.ID, map[string]any{"bogus": 1}).apiErr(t, http.StatusBadRequest, "parameter_unknown", "bogus")
			a.test.pay(t, "ch_"+strings.Repeat("a", len(c.raw())), nil).apiErr(t, http.StatusNotFound, "resource_not_found", "")
		})
	})
}

// Past expires_at a charge can no longer be paid but reads pending for the
// expiry grace (a Pix paid in time may still be reported); once the grace
// has passed it reads expired, before any worker runs.
func TestExpiryOnRead(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b) // its own server: the test moves the clock
		a := e.newAccount(t, "Loja Expiry")
		c := a.test.mustCreate(t, map[string]any{"amount": 1500, "payment_method": "pix", "expires_in": 60})
		long := a.test.mustCreate(t, pixBody(1500)) // default window
		unread := a.test.mustCreate(t, map[string]any{"amount": 1500, "payment_method": "pix", "expires_in": 60})
		if d := c.Pix.ExpiresAt.Sub(c.CreatedAt.Truncate(time.Second)); d != 60*time.Second {
			t.Errorf("expires_at − created_at = %v, want 60s", d)
		}
		if s := a.test.get(t, c.ID).want(t, http.StatusOK).charge(t).Status; s != "pending" {
			t.Fatalf("fresh charge %q", s)
		}
		e.clock.Advance(61 * time.Second)
		// In the grace: still pending, and nothing can be paid.
		if s := a.test.get(t, c.ID).want(t, http.StatusOK).charge(t).Status; s != "pending" {
			t.Fatalf("61 s after a 60 s charge, in the expiry grace: %q, want pending", s)
		}
		a.test.pay(t, c.ID, nil).apiErr(t, http.StatusConflict, "charge_expired", "")
		if s := a.test.get(t, c.ID).want(t, http.StatusOK).charge(t).Status; s != "pending" {
			t.Fatalf("a refused late payment changed the charge to %q", s)
		}
		e.clock.Advance(app.DefaultExpiryGrace)
		// Several readers at once: all see it expired, and it is expired
		// (and its events written) once.
		var wg sync.WaitGroup
		rs := make([]*response, 8)
		errs := make([]error, len(rs))
		for i := range rs {
			wg.Go(func() { rs[i], errs[i] = a.test.send(http.MethodGet, "/charges/"+c.ID, nil, nil) })
		}
		wg.Wait()
		for i, r := range rs {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			if s := r.want(t, http.StatusOK).charge(t).Status; s != "expired" {
				t.Fatalf("past expires_at and the grace: %q, want expired", s)
			}
		}
		// Paying a charge past its expiry that nobody read since: 409.
		a.test.pay(t, unread.ID, nil).apiErr(t, http.StatusConflict, "charge_expired", "")
		if s := a.test.get(t, unread.ID).want(t, http.StatusOK).charge(t).Status; s != "expired" {
			t.Errorf("charge paid after expiry reads %q, want expired", s)
		}
		ctx := context.Background()
		var stored string
		if err := e.srv.App.DB.Bun().NewSelect().Table("charges").Column("status").Where("id = ?", c.raw()).Scan(ctx, &stored); err != nil || stored != "EXPIRED" {
			t.Errorf("stored status %q (%v), want EXPIRED persisted by the read", stored, err)
		}
		expiredEvents, err := e.srv.App.DB.Bun().NewSelect().Table("charge_events").
			Where("charge_id = ? AND ? IN (type, twin_type)", c.raw(), "charge.expired").Count(ctx)
		if err != nil || expiredEvents != 1 {
			t.Errorf("%d charge.expired events (%v), want 1", expiredEvents, err)
		}
		// The list agrees, and the longer charge is still open.
		l := a.test.list(t, "")
		got := map[string]string{}
		for _, x := range l.Data {
			got[x.ID] = x.Status
		}
		if got[c.ID] != "expired" || got[long.ID] != "pending" {
			t.Errorf("list statuses %v", got)
		}
		a.test.pay(t, c.ID, nil).apiErr(t, http.StatusConflict, "charge_expired", "")
		if s := a.test.get(t, c.raw()).want(t, http.StatusOK).charge(t).Status; s != "expired" {
			t.Errorf("after a refused payment: %q", s)
		}
		if s := a.test.pay(t, long.ID, nil).want(t, http.StatusOK).charge(t).Status; s != "paid" {
			t.Errorf("default-window charge: %q, want paid", s)
		}
	})
}

// An acquirer outage is a 503 that leaves nothing behind; the retry with
// the same key creates the charge once.
func TestAcquirerOutageRetry(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b) // its own server: the test takes the sandbox down
		a := e.newAccount(t, "Loja Queda")
		key := newKey()
		body := pixBody(1234)
		e.srv.Sandbox.SetDown(true)
		for range 2 {
			env := a.test.do(t, http.MethodPost, "/charges", body, hdr{"Idempotency-Key": key}).apiErr(t, http.StatusServiceUnavailable, "acquirer_unavailable", "")
			if env.Error.Type != "provider_error" {
				t.Errorf("error.type %q, want provider_error", env.Error.Type)
			}
		}
		if n := e.countRows(t, "charges", a.AccountID); n != 0 {
			t.Fatalf("%d charges after failed creates", n)
		}
		e.srv.Sandbox.SetDown(false)
		first := a.test.do(t, http.MethodPost, "/charges", body, hdr{"Idempotency-Key": key}).want(t, http.StatusCreated)
		if first.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("the first successful create is marked as a replay")
		}
		again := a.test.do(t, http.MethodPost, "/charges", body, hdr{"Idempotency-Key": key}).want(t, http.StatusCreated)
		if !bytes.Equal(again.Body, first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("retry after success is not a replay: %s", again.Body)
		}
		e.assertOneCharge(t, a, first.charge(t).ID)
	})
}
