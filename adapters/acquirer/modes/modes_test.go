package modes_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix"
	"github.com/quitapix/quita/adapters/acquirer/modes"
	"github.com/quitapix/quita/adapters/acquirer/sandbox"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
)

type noStore struct{ ports.AcquirerAccountStore }

func (noStore) GetAcquirerAccount(context.Context, string, string) (*ports.AcquirerAccount, error) {
	return nil, ports.ErrNotFound
}

func TestRouterSendsTestModeToTheSandbox(t *testing.T) {
	t.Parallel()
	sb := sandbox.New(sandbox.Config{LocationHost: "pay.example.com/pix"}, testkit.NewClock(time.Time{}))
	sealer, _ := bcbpix.NewSealer(nil)
	r := &modes.Router{Test: sb, Live: bcbpix.New(noStore{}, sealer, bcbpix.Options{})}
	ctx := context.Background()
	tests := []struct {
		mode        domain.Mode
		wantName    string
		wantErr     error
		wantCashout bool
	}{
		{domain.ModeTest, sandbox.Name, nil, true},
		// The live provider has no PSP for this account: not configured, not the sandbox.
		{domain.ModeLive, bcbpix.Name, ports.ErrAcquirerNotConfigured, false},
	}
	for _, tc := range tests {
		s := ports.Scope{AccountID: "acct_x", Mode: tc.mode}
		if got := ports.ProviderName(r, s); got != tc.wantName {
			t.Errorf("%s: provider %q, want %q", tc.mode, got, tc.wantName)
		}
		_, err := r.CreatePixCharge(ctx, ports.CreatePixChargeRequest{Scope: s, TxID: domain.DeriveTxID("x"), Amount: 100,
			ExpiresAt: time.Now().Add(time.Hour), MerchantName: "LOJA", MerchantCity: "SAO PAULO"})
		if !errors.Is(err, tc.wantErr) && !(tc.wantErr == nil && err == nil) {
			t.Errorf("%s: create %v, want %v", tc.mode, err, tc.wantErr)
		}
		if got := ports.SupportsCashout(r, s); got != tc.wantCashout {
			t.Errorf("%s: cashout %v", tc.mode, got)
		}
		_, err = r.CreatePaymentMethods(ctx, ports.CreateMethodsRequest{Scope: s, ChargeID: "c", Methods: []domain.Method{domain.MethodBoleto},
			Amount: 100, Currency: "BRL", ExpiresAt: time.Now().Add(time.Hour)})
		if (tc.mode == domain.ModeLive) != errors.Is(err, ports.ErrAcquirerRejected) {
			t.Errorf("%s: other methods: %v", tc.mode, err)
		}
	}
	// References route by prefix.
	if _, err := r.ChargeStatus(ctx, "bcbpix:acct_x:"+domain.DeriveTxID("y")); !errors.Is(err, ports.ErrAcquirerNotConfigured) {
		t.Errorf("a bcbpix reference did not reach bcbpix: %v", err)
	}
}
