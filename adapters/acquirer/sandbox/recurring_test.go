package sandbox_test

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/sandbox"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/domain/brcode"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
)

// recIDShape is the API Pix's idRec: R, R or N, an ISPB, yyyyMMdd and 11
// characters.
var recIDShape = regexp.MustCompile(`^R[RN][0-9A-Z]{8}[0-9]{8}[a-zA-Z0-9]{11}$`)

// The sandbox's rec answers the same for every retry of a create, in the
// API Pix's shapes, with the QR code each journey needs.
func TestSandboxRecurrence(t *testing.T) {
	t.Parallel()
	a := sandbox.New(sandbox.Config{LocationHost: "pay.example.com/checkout/pix"}, testkit.NewClock(time.Date(2027, 1, 10, 15, 0, 0, 0, time.UTC)))
	ctx := context.Background()
	scope := ports.Scope{AccountID: "acct_1", Mode: domain.ModeTest}
	cob, err := a.CreatePixCharge(ctx, ports.CreatePixChargeRequest{Scope: scope, TxID: domain.DeriveTxID("first"), Amount: 990,
		ExpiresAt: time.Now().Add(time.Hour), MerchantName: "Loja", MerchantCity: "Sao Paulo"})
	if err != nil {
		t.Fatal(err)
	}
	base := ports.CreateRecurrenceRequest{Scope: scope, Key: "k1", DebtorName: "Maria", DebtorTaxID: "52998224725", Contract: "C1",
		StartDate: bizdays.MustDate(2027, 1, 31), Interval: domain.IntervalMonthly, Amount: 4990, RetryPolicy: domain.RetryThreeInSevenDays,
		MerchantName: "Loja", MerchantCity: "Sao Paulo"}
	for _, j := range []domain.Journey{domain.JourneyAuthorizationRequest, domain.JourneyQRCode, domain.JourneyQRCodeWithFirstPayment} {
		req := base
		req.Journey, req.FirstPaymentTxID, req.FirstPaymentBRCode = j, cob.TxID, cob.BRCode
		rec, err := a.CreateRecurrence(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", j, err)
		}
		again, _ := a.CreateRecurrence(ctx, req)
		if !recIDShape.MatchString(rec.RecID) || rec.RecID[:2] != "RR" || rec.RecID != again.RecID || rec.Status != domain.RecCreated {
			t.Errorf("%s: rec %+v (again %s)", j, rec, again.RecID)
		}
		if !j.QR() {
			if rec.BRCode != "" {
				t.Errorf("%s: a QR code %q", j, rec.BRCode)
			}
			continue
		}
		code, err := brcode.Parse(rec.BRCode)
		if j == domain.JourneyQRCode {
			// A recurrence alone has no charge in template 26, which the
			// charge parser refuses; its data objects still read.
			if _, err := brcode.SplitTLV(rec.BRCode); err != nil {
				t.Errorf("%s: %v", j, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", j, err)
		}
		if loc, ok := brcode.RecurrenceLocation(code); !ok || loc != rec.Location || code.Location != cob.Location {
			t.Errorf("%s: composite code carries rec %q cob %q, want %q %q", j, loc, code.Location, rec.Location, cob.Location)
		}
	}
	none := base
	none.RetryPolicy, none.Journey = domain.RetryNone, domain.JourneyAuthorizationRequest
	if rec, _ := a.CreateRecurrence(ctx, none); rec.RecID[:2] != "RN" {
		t.Errorf("a rec without retries: %s", rec.RecID)
	}
	bad := base
	bad.Journey, bad.FirstPaymentBRCode = domain.JourneyQRCodeWithFirstPayment, ""
	if _, err := a.CreateRecurrence(ctx, bad); !errors.Is(err, ports.ErrAcquirerRejected) {
		t.Errorf("JORNADA_3 without its cob: %v", err)
	}
}

// A cycle's cobr is scheduled for its due date moved to a business day;
// the sandbox's payer bank pays it, or refuses it when asked to fail.
func TestSandboxRecurringCharge(t *testing.T) {
	t.Parallel()
	a := sandbox.New(sandbox.Config{}, testkit.NewClock(time.Date(2027, 1, 10, 15, 0, 0, 0, time.UTC)))
	ctx := context.Background()
	scope := ports.Scope{AccountID: "acct_1", Mode: domain.ModeTest}
	txid := domain.CycleTxID("acct_1", domain.ModeTest, "sub", 1)
	cobr, err := a.CreateRecurringCharge(ctx, ports.RecurringChargeRequest{Scope: scope, TxID: txid, RecID: "RR", Amount: 4990,
		DueDate: bizdays.MustDate(2027, 1, 31)})
	if err != nil || cobr.Status != domain.CobRActive || len(cobr.Attempts) != 1 || cobr.Attempts[0].Date != bizdays.MustDate(2027, 2, 1) {
		t.Fatalf("cobr %+v %v (31 Jan 2027 is a Sunday)", cobr, err)
	}
	paid, err := a.SimulateRecurringDebit(ctx, ports.SimulateDebitRequest{Scope: scope, TxID: txid, Amount: 4990})
	if err != nil || paid.Paid == nil || paid.Paid.Amount != 4990 || !domain.ValidEndToEndID(paid.Paid.EndToEndID) {
		t.Errorf("paid debit %+v %v", paid, err)
	}
	failed, err := a.SimulateRecurringDebit(ctx, ports.SimulateDebitRequest{Scope: scope, TxID: txid, Amount: 4990, Fail: true})
	if err != nil || failed.Paid != nil {
		t.Errorf("failed debit %+v %v", failed, err)
	}
	a.SetDown(true)
	if _, err := a.CreateRecurringCharge(ctx, ports.RecurringChargeRequest{Scope: scope, TxID: txid, RecID: "RR", Amount: 1,
		DueDate: bizdays.MustDate(2027, 1, 31)}); !errors.Is(err, ports.ErrAcquirerUnavailable) {
		t.Errorf("down: %v", err)
	}
}
