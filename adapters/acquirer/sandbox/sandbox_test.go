package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/sandbox"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
)

// The returns the sandbox keeps are bounded (security.md, item 17); the
// oldest go first and a retried id is neither stored twice nor refused.
func TestReturnsAreBounded(t *testing.T) {
	t.Parallel()
	a := sandbox.New(sandbox.Config{MaxReturns: 3}, testkit.NewClock(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)))
	ctx := context.Background()
	ret := func(i int) {
		t.Helper()
		req := ports.ReturnPixRequest{ReturnID: fmt.Sprintf("ret%d", i), EndToEndID: "E99999999202611241200abcdefghijk", Amount: 100}
		if r, err := a.ReturnPix(ctx, req); err != nil || r.ProviderRef != req.ReturnID {
			t.Fatalf("return %d: %+v, %v", i, r, err)
		}
	}
	for i := range 1000 {
		ret(i)
	}
	ret(999) // a retry of a kept id
	got := a.Returns()
	if len(got) != 3 || got[0].ReturnID != "ret997" || got[2].ReturnID != "ret999" {
		t.Fatalf("kept %+v", got)
	}
	// The sandbox's payer banks credit every return at once, kept or not:
	// it holds nothing another process would need.
	for _, id := range []string{"ret0", "ret999"} {
		st, err := a.ReturnPixStatus(ctx, ports.ReturnPixStatusRequest{ReturnID: id, EndToEndID: "E99999999202611241200abcdefghijk"})
		if err != nil || st.Status != domain.PixReturnReturned {
			t.Errorf("status of %s: %+v, %v", id, st, err)
		}
	}
}

// A cashout refund is a Pix out through SendPix, as a payout
// is, under the send id derived from the refund: started twice, it is one
// Pix. It completes on its first status check unless the key fails it; a
// devolution stays a return of the original Pix.
func TestCashoutRefundIsOnePixSend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	scope := ports.Scope{AccountID: "acct1", Mode: domain.ModeTest}
	for _, tt := range []struct {
		name, destination string
		strategy          domain.RefundStrategy
		wantKey           domain.PixKey // zero: the payer's derived EVP
		sent              bool
		status            domain.RefundStatus
	}{
		{"to the payer's key", "", domain.StrategyCashout, domain.PixKey{}, true, domain.RefundRefunded},
		{"to destinationKey", "+55 11 98765-4321", domain.StrategyCashout, domain.PixKey{Type: domain.PixKeyPhone, Value: "+5511987654321"}, true, domain.RefundRefunded},
		{"to a failing test key", "account_closed" + sandbox.FailingKeyDomain, domain.StrategyCashout,
			domain.PixKey{Type: domain.PixKeyEmail, Value: "account_closed" + sandbox.FailingKeyDomain}, true, domain.RefundFailed},
		{"to no Pix key", "not a key", domain.StrategyCashout, domain.PixKey{}, false, domain.RefundFailed},
		{"devolution", "", domain.StrategyDevolution, domain.PixKey{}, false, domain.RefundRefunded},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := sandbox.New(sandbox.Config{}, testkit.NewClock(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)))
			req := ports.RefundRequest{Scope: scope, ChargeID: "ch1", RefundID: "re1", Method: domain.MethodPix, Strategy: tt.strategy,
				EndToEndID: "E99999999202611251200abcdefghijk", Amount: 700, DestinationKey: tt.destination}
			var ref string
			for range 2 { // a start repeated after a crash
				r, err := a.Refund(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				if ref != "" && r != ref {
					t.Fatalf("repeated start answered %q, then %q", ref, r)
				}
				ref = r
			}
			sends := a.Sends()
			if !tt.sent {
				if len(sends) != 0 {
					t.Fatalf("Pix sent: %+v", sends)
				}
			} else {
				if len(sends) != 1 {
					t.Fatalf("%d Pix sent, want 1: %+v", len(sends), sends)
				}
				s := sends[0]
				if s.SendID != domain.RefundSendID("acct1", "re1") || s.Amount != 700 || s.Scope != scope {
					t.Errorf("send %+v", s)
				}
				if tt.wantKey == (domain.PixKey{}) {
					if k, err := domain.ParsePixKey(s.Key.Value, domain.PixKeyEVP); err != nil || k != s.Key {
						t.Errorf("payer's key %+v is not an EVP: %v", s.Key, err)
					}
				} else if s.Key != tt.wantKey {
					t.Errorf("key %+v, want %+v", s.Key, tt.wantKey)
				}
			}
			if n := len(a.Returns()); (n == 1) != (tt.strategy == domain.StrategyDevolution) {
				t.Errorf("%d returns", n)
			}
			if st, err := a.RefundStatus(ctx, ref); err != nil || st != string(tt.status) {
				t.Errorf("status %q, %v; want %s", st, err, tt.status)
			}
		})
	}
}

// Payouts' Pix sends are kept once per send id too.
func TestSendsKeepEachSendIDOnce(t *testing.T) {
	t.Parallel()
	a := sandbox.New(sandbox.Config{MaxReturns: 2}, testkit.NewClock(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)))
	ctx := context.Background()
	for _, id := range []string{"a", "b", "a", "c"} {
		req := ports.PixSendRequest{SendID: domain.DeriveTxID(id), Amount: 100, Key: domain.PixKey{Type: domain.PixKeyCPF, Value: "52998224725"}}
		if res, err := a.SendPix(ctx, req); err != nil || res.Status != domain.PayoutProcessing {
			t.Fatalf("send %s: %+v %v", id, res, err)
		}
	}
	got := a.Sends()
	if len(got) != 2 || got[0].SendID != domain.DeriveTxID("b") || got[1].SendID != domain.DeriveTxID("c") {
		t.Fatalf("kept %+v", got)
	}
}

// pspCalls are the sandbox's calls a real PSP answers over the network,
// each with a request it accepts.
func pspCalls() []struct {
	name string
	call func(context.Context, *sandbox.Acquirer) error
} {
	scope := ports.Scope{AccountID: "acct1", Mode: domain.ModeTest}
	e2e := "E99999999202611251200abcdefghijk"
	refund := func(s domain.RefundStrategy) func(context.Context, *sandbox.Acquirer) error {
		return func(ctx context.Context, a *sandbox.Acquirer) error {
			_, err := a.Refund(ctx, ports.RefundRequest{Scope: scope, ChargeID: "ch1", RefundID: "re1", Method: domain.MethodPix,
				Strategy: s, EndToEndID: e2e, Amount: 700, DestinationKey: "maria@example.com"})
			return err
		}
	}
	return []struct {
		name string
		call func(context.Context, *sandbox.Acquirer) error
	}{
		{"CreatePixCharge", func(ctx context.Context, a *sandbox.Acquirer) error {
			_, err := a.CreatePixCharge(ctx, ports.CreatePixChargeRequest{Scope: scope, ChargeID: "ch1", TxID: domain.DeriveTxID("ch1"),
				Amount: 700, MerchantName: "Loja", MerchantCity: "SAO PAULO"})
			return err
		}},
		{"CancelPixCharge", func(ctx context.Context, a *sandbox.Acquirer) error {
			return a.CancelPixCharge(ctx, ports.CancelPixChargeRequest{})
		}},
		{"CreatePaymentMethods", func(ctx context.Context, a *sandbox.Acquirer) error {
			_, err := a.CreatePaymentMethods(ctx, ports.CreateMethodsRequest{Scope: scope, ChargeID: "ch1",
				Methods: []domain.Method{domain.MethodBoleto}, Amount: 700, Currency: "BRL"})
			return err
		}},
		{"ReturnPix", func(ctx context.Context, a *sandbox.Acquirer) error {
			_, err := a.ReturnPix(ctx, ports.ReturnPixRequest{Scope: scope, ReturnID: "D1", EndToEndID: e2e, Amount: 700})
			return err
		}},
		{"ReturnPixStatus", func(ctx context.Context, a *sandbox.Acquirer) error {
			_, err := a.ReturnPixStatus(ctx, ports.ReturnPixStatusRequest{Scope: scope, ReturnID: "D1", EndToEndID: e2e})
			return err
		}},
		{"Refund devolution", refund(domain.StrategyDevolution)},
		{"Refund cashout", refund(domain.StrategyCashout)},
		{"RefundStatus", func(ctx context.Context, a *sandbox.Acquirer) error {
			_, err := a.RefundStatus(ctx, "sbx_re1")
			return err
		}},
		{"ChargeStatus", func(ctx context.Context, a *sandbox.Acquirer) error {
			_, err := a.ChargeStatus(ctx, "tx1")
			return err
		}},
		{"SendPix", func(ctx context.Context, a *sandbox.Acquirer) error {
			_, err := a.SendPix(ctx, ports.PixSendRequest{Scope: scope, SendID: domain.DeriveTxID("send1"), Amount: 700,
				Key: domain.PixKey{Type: domain.PixKeyCPF, Value: "52998224725"}})
			return err
		}},
		{"PixSendStatus", func(ctx context.Context, a *sandbox.Acquirer) error {
			_, err := a.PixSendStatus(ctx, scope, domain.DeriveTxID("send1"))
			return err
		}},
	}
}

// Config.Latency makes every call a PSP answers over the network take at
// least that long, as a round trip would; a context that ends first ends
// the wait with its error; zero waits for nothing (a cancelled context
// does not stop the call, so no timer was involved).
func TestLatencyDelaysEveryPSPCall(t *testing.T) {
	t.Parallel()
	const latency = 20 * time.Millisecond
	clock := testkit.NewClock(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range pspCalls() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			slow := sandbox.New(sandbox.Config{LocationHost: "pay.example.com/pix", Latency: latency}, clock)
			start := time.Now()
			if err := c.call(context.Background(), slow); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took < latency {
				t.Errorf("answered after %s, want at least the latency %s", took, latency)
			}

			stuck := sandbox.New(sandbox.Config{LocationHost: "pay.example.com/pix", Latency: time.Hour}, clock)
			if err := c.call(cancelled, stuck); !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled context: %v, want context.Canceled", err)
			}
			ctx, stop := context.WithTimeout(context.Background(), 10*time.Millisecond)
			defer stop()
			if err := c.call(ctx, stuck); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("context ending during the wait: %v, want context.DeadlineExceeded", err)
			}

			instant := sandbox.New(sandbox.Config{LocationHost: "pay.example.com/pix"}, clock)
			if err := c.call(cancelled, instant); err != nil {
				t.Errorf("no latency, cancelled context: %v, want the call to answer without waiting", err)
			}
		})
	}
}

// The test helper that plays the payer's bank is no PSP call: it never
// waits.
func TestLatencySparesTheTestHelpers(t *testing.T) {
	t.Parallel()
	a := sandbox.New(sandbox.Config{LocationHost: "pay.example.com/pix", Latency: time.Hour},
		testkit.NewClock(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.SimulatePixPayment(cancelled, ports.SimulatePaymentRequest{Amount: 700}); err != nil {
		t.Fatalf("SimulatePixPayment waited or failed: %v", err)
	}
}

// TestSimulatedPayerHasAName: a test payment that names no payer gets one
// of the sandbox's names, as a PSP always reports the payer's name; one
// that names a payer keeps it.
func TestSimulatedPayerHasAName(t *testing.T) {
	a := sandbox.New(sandbox.Config{}, testkit.NewClock(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)))
	p, err := a.SimulatePixPayment(context.Background(), ports.SimulatePaymentRequest{Amount: 100})
	if err != nil || len(strings.Fields(p.PayerName)) < 2 {
		t.Fatalf("a payment without a payer: %+v, %v", p, err)
	}
	named, err := a.SimulatePixPayment(context.Background(), ports.SimulatePaymentRequest{Amount: 100, PayerName: "Zé"})
	if err != nil || named.PayerName != "Zé" {
		t.Fatalf("a named payer: %+v, %v", named, err)
	}
}
