package app_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

const (
	receiptAccount = "acct_padaria"
	payerCPF       = "52998224725"
	paidE2E        = "E12345678202611221205abcdefghijk"
)

type receiptEnv struct {
	h        *harness
	payouts  map[string]*domain.Payout
	svc      *app.ReceiptService
	renderer *mocks.ReceiptRendererMock
	refunds  map[string]domain.Refund
	caller   app.Caller
}

func newReceiptEnv(t *testing.T, mode domain.Mode) *receiptEnv {
	t.Helper()
	return newReceiptEnvWith(t, mode, app.ReceiptsConfig{Institution: "Banco Exemplo S.A."})
}

func newReceiptEnvWith(t *testing.T, mode domain.Mode, cfg app.ReceiptsConfig) *receiptEnv {
	t.Helper()
	e := &receiptEnv{h: newHarness(t), refunds: map[string]domain.Refund{}, payouts: map[string]*domain.Payout{}}
	e.renderer = &mocks.ReceiptRendererMock{RenderPDFFunc: func(ports.Receipt) ([]byte, error) { return []byte("%PDF-test"), nil }}
	store := &mocks.PaymentStoreMock{FindRefundFunc: func(_ context.Context, s ports.Scope, id string) (*domain.Refund, error) {
		r, ok := e.refunds[id]
		if !ok || r.AccountID != s.AccountID || r.Mode != s.Mode {
			return nil, ports.ErrNotFound
		}
		return &r, nil
	}}
	payouts := &mocks.PayoutStoreMock{GetPayoutFunc: func(_ context.Context, s ports.Scope, id string) (*domain.Payout, error) {
		p, ok := e.payouts[id]
		if !ok || p.AccountID() != s.AccountID || p.Mode() != s.Mode {
			return nil, ports.ErrNotFound
		}
		return p, nil
	}}
	e.svc = app.NewReceiptService(e.h.svc, store, payouts, e.renderer, fixedClock{t0.Add(time.Hour)}, cfg)
	e.caller = app.Caller{Mode: mode, Account: domain.Account{ID: receiptAccount, Name: "Padaria", MerchantName: "Padaria São João", Document: "11222333000181"}}
	return e
}

type fixedClock struct{ t time.Time }

func (c fixedClock) Now() time.Time { return c.t }

// put stores a charge of the receipt account in mode, paid by a CPF when
// paid is set.
func (e *receiptEnv) put(id string, mode domain.Mode, status domain.TxStatus, settled bool, ret domain.ReturnState) {
	s := domain.ChargeSnapshot{
		ID: id, AccountID: receiptAccount, Mode: mode, Amount: 123456, Currency: domain.CurrencyBRL,
		Methods: []domain.Method{domain.MethodPix}, Status: status, Metadata: map[string]any{"description": "Pão de queijo"},
		Customer: domain.Customer{Name: "Cliente Declarado", Document: "39053344705"},
		Pix:      &domain.PixDetails{TxID: "txid" + id}, ReturnState: ret,
		ExpiresAt: t0.Add(time.Hour), CreatedAt: t0, UpdatedAt: t0,
	}
	if settled {
		s.Settlement = &domain.Settlement{EndToEndID: paidE2E, Amount: 123456, PaidAt: t0.Add(5 * time.Minute),
			PaidWith: domain.MethodPix, PayerTaxID: payerCPF, PayerName: "Maria Conceição"}
	}
	e.h.mu.Lock()
	e.h.charges[id] = domain.UnmarshalChargeFromStorage(s)
	e.h.mu.Unlock()
}

// The payment receipt carries the merchant as payee and the payer the bank
// reported, with both documents masked before they reach the renderer.
func TestPaymentReceiptParties(t *testing.T) {
	t.Parallel()
	e := newReceiptEnv(t, domain.ModeLive)
	e.put("paid", domain.ModeLive, domain.TxPaid, true, domain.ReturnNone)
	doc, err := e.svc.PaymentReceipt(context.Background(), e.caller, "paid", domain.LocalePtBR)
	if err != nil {
		t.Fatal(err)
	}
	if doc.ContentType != "application/pdf" || doc.Filename != "comprovante-tx_paid.pdf" || string(doc.Body) != "%PDF-test" {
		t.Errorf("document = %q %q %q", doc.ContentType, doc.Filename, doc.Body)
	}
	calls := e.renderer.RenderPDFCalls()
	if len(calls) != 1 {
		t.Fatalf("%d renders", len(calls))
	}
	r := calls[0].R
	want := ports.Receipt{
		Kind: ports.ReceiptPayment, Locale: domain.LocalePtBR, Mode: domain.ModeLive,
		Amount: 123456, Currency: domain.CurrencyBRL, At: t0.Add(5 * time.Minute), IssuedAt: t0.Add(time.Hour),
		Method: domain.MethodPix,
		To: ports.ReceiptParty{Name: "Padaria São João", MaskedDocument: "**.222.333/0001-**", DocumentKind: domain.TaxIDCNPJ,
			Institution: "Banco Exemplo S.A."},
		From: ports.ReceiptParty{Name: "Maria Conceição", MaskedDocument: "***.982.247-**", DocumentKind: domain.TaxIDCPF,
			Institution: "ISPB 12345678"},
		Description: "Pão de queijo", TransactionID: "tx_paid", EndToEndID: paidE2E, TxID: "txidpaid",
	}
	if fmt.Sprintf("%+v", r) != fmt.Sprintf("%+v", want) {
		t.Errorf("receipt\n got %+v\nwant %+v", r, want)
	}
	// Neither the payer's nor the declared customer's document reaches
	// the renderer in clear.
	for _, doc := range []string{payerCPF, "39053344705", "11222333000181", "Cliente Declarado"} {
		if strings.Contains(fmt.Sprintf("%+v", r), doc) {
			t.Errorf("receipt data holds %s", doc)
		}
	}
}

// Test-mode money is the sandbox's, on both sides.
func TestTestModeReceiptNamesTheSandbox(t *testing.T) {
	t.Parallel()
	e := newReceiptEnv(t, domain.ModeTest)
	e.put("paid", domain.ModeTest, domain.TxPaid, true, domain.ReturnNone)
	if _, err := e.svc.PaymentReceipt(context.Background(), e.caller, "paid", domain.LocaleEN); err != nil {
		t.Fatal(err)
	}
	r := e.renderer.RenderPDFCalls()[0].R
	if r.Mode != domain.ModeTest || r.To.Institution != "Quita Sandbox" || r.From.Institution != "ISPB 12345678" || r.Locale != domain.LocaleEN {
		t.Errorf("test receipt: %+v", r)
	}
}

// No receipt for money the merchant was not credited with, nor for
// another account's or mode's charge.
func TestPaymentReceiptUnavailable(t *testing.T) {
	t.Parallel()
	e := newReceiptEnv(t, domain.ModeLive)
	e.put("open", domain.ModeLive, domain.TxWaitingPayment, false, domain.ReturnNone)
	e.put("held", domain.ModeLive, domain.TxProcessing, true, domain.ReturnNone)
	e.put("returned", domain.ModeLive, domain.TxRefunded, true, domain.ReturnDone)
	e.put("test", domain.ModeTest, domain.TxPaid, true, domain.ReturnNone)
	for id, want := range map[string]error{
		"open": app.ErrReceiptUnavailable, "held": app.ErrReceiptUnavailable, "returned": app.ErrReceiptUnavailable,
		"test": ports.ErrNotFound, "nope": ports.ErrNotFound,
	} {
		if _, err := e.svc.PaymentReceipt(context.Background(), e.caller, id, domain.LocalePtBR); !errors.Is(err, want) {
			t.Errorf("%s: err = %v, want %v", id, err, want)
		}
	}
	if n := len(e.renderer.RenderPDFCalls()); n != 0 {
		t.Errorf("%d renders for no receipt", n)
	}
}

// A refund receipt exists once the refund is confirmed, for that payment
// only; the merchant returned the money to the payer.
func TestRefundReceipt(t *testing.T) {
	t.Parallel()
	e := newReceiptEnv(t, domain.ModeLive)
	e.put("paid", domain.ModeLive, domain.TxPaid, true, domain.ReturnNone)
	e.put("other", domain.ModeLive, domain.TxPaid, true, domain.ReturnNone)
	base := domain.Refund{ChargeID: "paid", AccountID: receiptAccount, Mode: domain.ModeLive, Amount: 50000,
		Currency: domain.CurrencyBRL, Reason: "Produto esgotado", Strategy: domain.StrategyDevolution, EndToEndID: paidE2E,
		CreatedAt: t0.Add(10 * time.Minute), UpdatedAt: t0.Add(11 * time.Minute)}
	for id, st := range map[string]domain.RefundStatus{"pending": domain.RefundPending, "going": domain.RefundInProgress,
		"failed": domain.RefundFailed, "done": domain.RefundRefunded} {
		r := base
		r.ID, r.Status = id, st
		e.refunds[id] = r
	}
	for id, want := range map[string]error{"pending": app.ErrReceiptUnavailable, "going": app.ErrReceiptUnavailable,
		"failed": app.ErrReceiptUnavailable, "nope": ports.ErrNotFound} {
		if _, err := e.svc.RefundReceipt(context.Background(), e.caller, "paid", id, domain.LocalePtBR); !errors.Is(err, want) {
			t.Errorf("%s: err = %v, want %v", id, err, want)
		}
	}
	if _, err := e.svc.RefundReceipt(context.Background(), e.caller, "other", "done", domain.LocalePtBR); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("refund under another payment: %v", err)
	}
	doc, err := e.svc.RefundReceipt(context.Background(), e.caller, "paid", "done", domain.LocaleEN)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Filename != "refund-receipt-re_done.pdf" {
		t.Errorf("filename %q", doc.Filename)
	}
	r := e.renderer.RenderPDFCalls()[0].R
	if r.Kind != ports.ReceiptRefund || r.Amount != 50000 || !r.At.Equal(t0.Add(11*time.Minute)) || r.ReferenceID != "re_done" ||
		r.TransactionID != "tx_paid" || r.OriginalEndToEndID != paidE2E || r.EndToEndID != "" || r.Description != "Produto esgotado" ||
		r.From.Name != "Padaria São João" || r.To.Name != "Maria Conceição" || r.To.MaskedDocument != "***.982.247-**" {
		t.Errorf("refund receipt: %+v", r)
	}
}

// A refund receipt names who actually received the money: for a cashout
// to a key the merchant named, that key, masked, and never the payer (a
// merchant must not be able to hand the payer a receipt saying they were
// refunded when the money went elsewhere); for a cashout without a key,
// the payer, whose document was the key; for a devolution, the payer at
// the bank that paid.
func TestRefundReceiptNamesTheDestination(t *testing.T) {
	t.Parallel()
	e := newReceiptEnv(t, domain.ModeLive)
	e.put("paid", domain.ModeLive, domain.TxPaid, true, domain.ReturnNone)
	base := domain.Refund{ChargeID: "paid", AccountID: receiptAccount, Mode: domain.ModeLive, Amount: 50000,
		Currency: domain.CurrencyBRL, Status: domain.RefundRefunded, EndToEndID: paidE2E,
		CreatedAt: t0.Add(10 * time.Minute), UpdatedAt: t0.Add(11 * time.Minute)}
	for _, tc := range []struct {
		id       string
		strategy domain.RefundStrategy
		key      string
		fee      int64
		to       ports.ReceiptParty
	}{
		{"mule", domain.StrategyCashout, "conta.laranja@example.com", 50, ports.ReceiptParty{PixKey: "c***@example.com"}},
		{"phone", domain.StrategyCashout, "+5511987654321", 0, ports.ReceiptParty{PixKey: "+5511*****4321"}},
		{"own", domain.StrategyCashout, "", 0, ports.ReceiptParty{Name: "Maria Conceição", MaskedDocument: "***.982.247-**",
			DocumentKind: domain.TaxIDCPF, PixKey: "***.982.247-**"}},
		{"back", domain.StrategyDevolution, "conta.laranja@example.com", 0, ports.ReceiptParty{Name: "Maria Conceição",
			MaskedDocument: "***.982.247-**", DocumentKind: domain.TaxIDCPF, Institution: "ISPB 12345678"}},
	} {
		r := base
		r.ID, r.Strategy, r.DestinationKey, r.Fee = tc.id, tc.strategy, tc.key, tc.fee
		e.refunds[tc.id] = r
		if _, err := e.svc.RefundReceipt(context.Background(), e.caller, "paid", tc.id, domain.LocalePtBR); err != nil {
			t.Fatal(err)
		}
		calls := e.renderer.RenderPDFCalls()
		got := calls[len(calls)-1].R
		if got.To != tc.to || got.Fee != tc.fee || got.RefundStrategy != tc.strategy || got.From.Name != "Padaria São João" {
			t.Errorf("%s: to %+v fee %d strategy %q, want to %+v fee %d strategy %q", tc.id, got.To, got.Fee, got.RefundStrategy,
				tc.to, tc.fee, tc.strategy)
		}
		text := fmt.Sprintf("%+v", got)
		for _, clear := range []string{payerCPF, "conta.laranja", "987654321"} {
			if strings.Contains(text, clear) {
				t.Errorf("%s: the receipt data holds %q in clear", tc.id, clear)
			}
		}
	}
}

// A payout receipt exists once the payout is paid: the merchant's money
// went to a Pix key, shown masked, with the fee apart.
func TestPayoutReceipt(t *testing.T) {
	t.Parallel()
	e := newReceiptEnv(t, domain.ModeLive)
	for id, st := range map[string]domain.PayoutStatus{"open": domain.PayoutPending, "sending": domain.PayoutProcessing,
		"failed": domain.PayoutFailed, "cancelled": domain.PayoutCancelled, "paid": domain.PayoutPaid} {
		e.payouts[id] = domain.UnmarshalPayoutFromStorage(domain.PayoutSnapshot{ID: id, AccountID: receiptAccount, Mode: domain.ModeLive,
			Amount: 250000, Fee: 50, Currency: domain.CurrencyBRL, Status: st, Key: domain.PixKey{Type: domain.PixKeyCPF, Value: payerCPF},
			Description: "Retirada", EndToEndID: paidE2E, CreatedAt: t0, PaidAt: t0.Add(2 * time.Minute)})
	}
	for _, id := range []string{"open", "sending", "failed", "cancelled"} {
		if _, err := e.svc.PayoutReceipt(context.Background(), e.caller, id, domain.LocalePtBR); !errors.Is(err, app.ErrReceiptUnavailable) {
			t.Errorf("%s: err = %v, want ErrReceiptUnavailable", id, err)
		}
	}
	test := e.caller
	test.Mode = domain.ModeTest
	if _, err := e.svc.PayoutReceipt(context.Background(), test, "paid", domain.LocalePtBR); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("another mode's payout: %v", err)
	}
	doc, err := e.svc.PayoutReceipt(context.Background(), e.caller, "paid", domain.LocalePtBR)
	if err != nil || doc.Filename != "comprovante-transferencia-po_paid.pdf" {
		t.Fatalf("payout receipt: %q %v", doc.Filename, err)
	}
	r := e.renderer.RenderPDFCalls()[0].R
	if r.Kind != ports.ReceiptPayout || r.Amount != 250000 || r.Fee != 50 || !r.At.Equal(t0.Add(2*time.Minute)) ||
		r.ReferenceID != "po_paid" || r.TransactionID != "" || r.EndToEndID != paidE2E || r.Description != "Retirada" ||
		r.From.Name != "Padaria São João" || r.From.MaskedDocument != "**.222.333/0001-**" || r.To.PixKey != "***.982.247-**" {
		t.Errorf("payout receipt: %+v", r)
	}
	if strings.Contains(fmt.Sprintf("%+v", r), payerCPF) {
		t.Error("the payout's key reached the renderer in clear")
	}
}

// At most MaxConcurrent receipts are drawn at once. With every slot held,
// a request waits for one at most QueueWait and is then refused with
// ErrReceiptsBusy, having drawn nothing; within the wait it gets the first
// slot given back; a request whose context ends stops waiting.
func TestReceiptsDrawnAtOnceAreBounded(t *testing.T) {
	t.Parallel()
	const slots = 2
	for _, c := range []struct {
		name string
		wait time.Duration
	}{{"refused", time.Millisecond}, {"waits", time.Minute}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newReceiptEnvWith(t, domain.ModeLive, app.ReceiptsConfig{MaxConcurrent: slots, QueueWait: c.wait})
			e.put("paid", domain.ModeLive, domain.TxPaid, true, domain.ReturnNone)
			var (
				mu             sync.Mutex
				calls, drawing int
				most           int
				entered        = make(chan struct{})
				release        = make(chan struct{})
			)
			e.renderer.RenderPDFFunc = func(ports.Receipt) ([]byte, error) {
				mu.Lock()
				calls++
				first := calls <= slots
				drawing++
				most = max(most, drawing)
				mu.Unlock()
				defer func() { mu.Lock(); drawing--; mu.Unlock() }()
				if first { // the first ones hold their slots until released
					entered <- struct{}{}
					<-release
				}
				return []byte("%PDF-test"), nil
			}
			ctx := context.Background()
			held := make(chan error, slots)
			for range slots {
				go func() {
					_, err := e.svc.PaymentReceipt(ctx, e.caller, "paid", domain.LocalePtBR)
					held <- err
				}()
				<-entered
			}
			if c.wait == time.Millisecond {
				for i := range 4 {
					if _, err := e.svc.PaymentReceipt(ctx, e.caller, "paid", domain.LocalePtBR); !errors.Is(err, app.ErrReceiptsBusy) {
						t.Errorf("request %d beyond the slots: %v, want ErrReceiptsBusy", i, err)
					}
				}
			} else {
				cancelled, cancel := context.WithCancel(ctx)
				cancel()
				if _, err := e.svc.PaymentReceipt(cancelled, e.caller, "paid", domain.LocalePtBR); !errors.Is(err, context.Canceled) {
					t.Errorf("a cancelled request beyond the slots: %v, want context.Canceled", err)
				}
				waiter := make(chan error, 1)
				go func() {
					_, err := e.svc.PaymentReceipt(ctx, e.caller, "paid", domain.LocalePtBR)
					waiter <- err
				}()
				release <- struct{}{} // one slot given back: the waiter draws
				if err := <-waiter; err != nil {
					t.Errorf("the request that waited: %v", err)
				}
			}
			close(release)
			for range slots {
				if err := <-held; err != nil {
					t.Errorf("a request holding a slot: %v", err)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if most != slots {
				t.Errorf("%d receipts drawn at once, want %d", most, slots)
			}
			if want := slots + map[bool]int{true: 0, false: 1}[c.wait == time.Millisecond]; calls != want {
				t.Errorf("%d receipts drawn, want %d", calls, want)
			}
		})
	}
}
