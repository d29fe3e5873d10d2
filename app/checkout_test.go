package app_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

// checkoutHarness adds a CheckoutService on the charge harness.
func checkoutHarness(t *testing.T, snaps ...domain.ChargeSnapshot) (*harness, *app.CheckoutService) {
	t.Helper()
	h := newHarness(t)
	for _, s := range snaps {
		h.charges[s.ID] = domain.UnmarshalChargeFromStorage(s)
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
	accounts := &mocks.AccountStoreMock{GetAccountFunc: func(_ context.Context, id string) (*domain.Account, error) {
		return &domain.Account{ID: id, Name: "Loja Boa", MerchantName: "LOJA BOA"}, nil
	}}
	clock := &mocks.ClockMock{NowFunc: func() time.Time { return t0 }}
	return h, app.NewCheckoutService(h.svc, accounts, clock, app.ChargesConfig{Links: domain.Links{CheckoutBase: "https://pay.example.com/c"}})
}

func multiSnapshot(id string, mode domain.Mode, methods ...domain.Method) domain.ChargeSnapshot {
	return domain.ChargeSnapshot{
		ID: id, AccountID: "acct_1", Mode: mode, Amount: 123456, Currency: domain.CurrencyBRL, Methods: methods,
		Status:   domain.TxWaitingPayment,
		Customer: domain.Customer{Name: "Maria", Document: "52998224725", Email: "m@example.com"},
		Metadata: map[string]any{"description": "Pedido 9", "phone": "+351912345678", "secret": "x"},
		Provider: "sandbox", ProviderRef: "ref-1",
		Details: domain.MethodDetails{
			CardRedirectURL: "https://pay.example.com/c/pix/card/" + id, BoletoLine: "1234", BoletoBarcode: "5678",
			BoletoPDFURL: "https://pay.example.com/b.pdf", MBEntity: "21999", MBReference: "123456789",
			CryptoAddress: "0xabc", CryptoNetwork: "ETHEREUM", CryptoCurrency: "USDT", CryptoAmount: "1.000000",
		},
		ExpiresAt: t0.Add(time.Hour), CreatedAt: t0, UpdatedAt: t0,
	}
}

// The view carries each offered method's public data, the MB WAY phone's
// last digits only, and only for methods the charge offers.
func TestCheckoutViewMethods(t *testing.T) {
	t.Parallel()
	all := multiSnapshot("rawall", domain.ModeTest, domain.MethodPix, domain.MethodBoleto, domain.MethodMultibanco,
		domain.MethodMBWay, domain.MethodCreditCard, domain.MethodCrypto)
	some := multiSnapshot("rawsome", domain.ModeTest, domain.MethodBoleto)
	pending := multiSnapshot("rawpend", domain.ModeTest, domain.MethodCrypto)
	pending.Details, pending.MethodsPending = domain.MethodDetails{}, true
	_, svc := checkoutHarness(t, all, some, pending)

	v, err := svc.View(context.Background(), "rawall")
	if err != nil {
		t.Fatal(err)
	}
	if v.Boleto == nil || v.Boleto.Line != "1234" || v.Multibanco == nil || v.Multibanco.Reference != "123456789" ||
		v.Card == nil || v.Crypto == nil || v.Crypto.Amount != "1.000000" || v.MBWayPhoneEnding != "678" || v.MethodsPending {
		t.Errorf("view %+v", v)
	}
	if v.Description != "Pedido 9" || v.MerchantName != "Loja Boa" {
		t.Errorf("description %q merchant %q", v.Description, v.MerchantName)
	}
	v, _ = svc.View(context.Background(), "rawsome")
	if v.Boleto == nil || v.Multibanco != nil || v.Card != nil || v.Crypto != nil || v.MBWayPhoneEnding != "" {
		t.Errorf("methods not offered reach the view: %+v", v)
	}
	v, _ = svc.View(context.Background(), "rawpend")
	if v.Crypto != nil || !v.MethodsPending {
		t.Errorf("pending view %+v", v)
	}
	st, err := svc.Status(context.Background(), "rawpend")
	if err != nil || st.MethodsReady {
		t.Errorf("status of a pending charge: %+v %v", st, err)
	}
	st, _ = svc.Status(context.Background(), "rawall")
	if !st.MethodsReady {
		t.Error("status of a finalised charge says not ready")
	}
}

// The sandbox card screen's decisions: test mode only, CREDIT_CARD only,
// open charges only; approve settles APPROVED with fees, decline REFUSED.
func TestCheckoutCardDecision(t *testing.T) {
	t.Parallel()
	h, svc := checkoutHarness(t,
		multiSnapshot("rawcard", domain.ModeTest, domain.MethodPix, domain.MethodCreditCard),
		multiSnapshot("rawdecl", domain.ModeTest, domain.MethodCreditCard),
		multiSnapshot("rawlive", domain.ModeLive, domain.MethodCreditCard),
		multiSnapshot("rawpix", domain.ModeTest, domain.MethodPix),
	)
	ctx := context.Background()
	if _, err := svc.CardScreen(ctx, "rawlive"); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("live card screen: %v", err)
	}
	if _, err := svc.CardDecision(ctx, "rawlive", true); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("live decision: %v", err)
	}
	if _, err := svc.CardScreen(ctx, "rawpix"); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("card screen without CREDIT_CARD: %v", err)
	}
	if _, err := svc.CardDecision(ctx, "rawpix", true); !errors.Is(err, app.ErrCardScreenUnavailable) {
		t.Errorf("decision without CREDIT_CARD: %v", err)
	}
	st, err := svc.CardDecision(ctx, "rawcard", true)
	if err != nil || st.Status != domain.StatusPaid {
		t.Fatalf("approve: %+v %v", st, err)
	}
	h.mu.Lock()
	c := h.charges["rawcard"]
	h.mu.Unlock()
	if c.Status() != domain.TxApproved || c.Settlement() == nil || c.Settlement().PaidWith != domain.MethodCreditCard {
		t.Errorf("approved charge: %s %+v", c.Status(), c.Settlement())
	}
	if _, err := svc.CardDecision(ctx, "rawcard", false); !errors.Is(err, app.ErrCardScreenUnavailable) {
		t.Errorf("second decision: %v", err)
	}
	if st, err := svc.CardDecision(ctx, "rawdecl", false); err != nil || st.Status != domain.StatusFailed {
		t.Errorf("decline: %+v %v", st, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.charges["rawdecl"].Status(); s != domain.TxRefused {
		t.Errorf("declined charge is %s", s)
	}
	var types []string
	for _, e := range h.events {
		types = append(types, string(e.Type))
	}
	if joined := strings.Join(types, ","); !strings.Contains(joined, "payment.completed") {
		t.Errorf("approval wrote no payment.completed event: %s", joined)
	}
}
