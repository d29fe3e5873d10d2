package store_test

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/ports"
)

// fullSnapshot has every field set, so that a column the store forgets
// shows up as a difference.
func fullSnapshot(t testing.TB, scope ports.Scope) domain.ChargeSnapshot {
	s := domain.ChargeSnapshot{
		ID:          newRawID(t),
		AccountID:   scope.AccountID,
		Mode:        scope.Mode,
		Amount:      math.MaxInt64 / 2, // far beyond float64's exact integers
		Currency:    domain.CurrencyBRL,
		Methods:     []domain.Method{domain.MethodPix, domain.MethodBoleto},
		Status:      domain.TxRefunded,
		Description: "Açaí – 2 × R$ 10,00 'quoted' \"double\" \\ back",
		Customer: domain.Customer{
			Name:     "Ana O'Neil",
			Document: "529.982.247-25",
			Email:    "ana@example.com",
			Phone:    "+5511999990000",
		},
		CustomerRef:   "cus_123",
		ExpectedPayer: "52998224725",
		Metadata: map[string]any{
			"order":  "A-1",
			"n":      json.Number("42.5"),
			"ok":     true,
			"none":   nil,
			"nested": map[string]any{"k": "v", "list": []any{"a", json.Number("1")}},
		},
		WebhookURL:  "https://merchant.example.com/hook?x=1&y=2",
		Provider:    "sandbox",
		ProviderRef: "prov-1",
		Pix: &domain.PixDetails{
			BRCode:    "00020101021226870014br.gov.bcb.pix2565pix.example.com/qr/v2/abc5204000053039865802BR6304ABCD",
			TxID:      "abcdefghijklmnopqrstuvwxyz012345",
			Location:  "pix.example.com/qr/v2/abc",
			ExpiresAt: baseTime.Add(time.Hour),
		},
		Settlement: &domain.Settlement{
			EndToEndID: "E12345678202603011200abcdefghijk",
			Amount:     1990,
			PaidAt:     baseTime.Add(10 * time.Minute),
			PaidWith:   domain.MethodPix,
			PayerTaxID: "11144477735",
			PayerName:  "Bruno",
		},
		Fees:            domain.Fees{Provider: 10, Platform: 9},
		RefundedAmount:  1990,
		RefundCompleted: 990,
		Details: domain.MethodDetails{
			CardRedirectURL: "https://pay.example.com/card/abc",
			MBEntity:        "21999",
			MBReference:     "123456789",
			MBExpiresAt:     baseTime.Add(72 * time.Hour),
			BoletoBarcode:   "23799755200003700003381260007827139500006330",
			BoletoLine:      "23793381286000782713695000063305975520000370000",
			BoletoPDFURL:    "https://pay.example.com/boleto/abc.pdf",
			BoletoExpiresAt: baseTime.Add(73 * time.Hour),
			CryptoAddress:   "0x52908400098527886e0f7030069857d2e4169ee7",
			CryptoNetwork:   "ETHEREUM",
			CryptoCurrency:  "USDT",
			CryptoAmount:    "123.456789",
		},
		MethodsPending: true,
		ReturnState:    domain.ReturnRequested,
		Disputes: []domain.Dispute{{ReturnID: "MED0001", EndToEndID: "E00000000202611221200abcdefghijk", Amount: 300,
			Reason: domain.DisputeFraud, At: baseTime.Add(time.Minute + 7*time.Microsecond)}},
		Due:             fullDueTerms(t),
		Subscription:    &domain.ChargeSubscription{ID: newRawID(t), Cycle: 3, DueDate: domain.BrasiliaDate(baseTime).AddDays(40)},
		OverdueNotified: true,
		Splits: &domain.Splits{FeePayer: domain.FeePayerProportional, Items: []domain.Split{
			{Account: domain.PrefixAccount + newRawID(t), Amount: 3000}, {Account: domain.PrefixAccount + newRawID(t), Percent: 1250}}},
		ExpiresAt: baseTime.Add(time.Hour),
		CreatedAt: baseTime,
		UpdatedAt: baseTime.Add(10*time.Minute + 1),
	}
	assertNoZeroField(t, reflect.ValueOf(s), "ChargeSnapshot")
	return s
}

// assertNoZeroField fails for any zero field, looking into structs and
// pointers, so that a field added to ChargeSnapshot must be added to the
// fixture (and so to the schema) before this suite passes again.
func assertNoZeroField(t testing.TB, v reflect.Value, path string) {
	t.Helper()
	if v.IsZero() {
		t.Fatalf("fixture leaves %s zero: set it so the round trip covers it", path)
	}
	if v.Type() == reflect.TypeFor[bizdays.Date]() {
		return // a civil date is one value: its state is unexported
	}
	if terms, ok := v.Interface().(domain.DueTerms); ok {
		// Its state is unexported: its rules stand for it, and one
		// discount type leaves the other's fields zero.
		if p := terms.Params(); p.Fine == nil || p.Interest == nil || p.Discount == nil || p.Abatement == nil {
			t.Fatalf("fixture leaves a rule of %s nil: set every one so the round trip covers it", path)
		}
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		assertNoZeroField(t, v.Elem(), path)
	case reflect.Struct:
		if _, isTime := v.Interface().(time.Time); isTime {
			return
		}
		for i := range v.NumField() {
			assertNoZeroField(t, v.Field(i), path+"."+v.Type().Field(i).Name)
		}
	}
}

// fullDueTerms are due-date terms with every rule but the per-day
// discount, which testChargeRoundTripFromDomain covers.
func fullDueTerms(t testing.TB) *domain.DueTerms {
	created := domain.BrasiliaDate(baseTime)
	days := 12
	terms, err := domain.NewDueTerms(domain.DueTermsParams{
		Original: 1990, Created: created, Due: created.AddDays(10), DaysAfterDue: &days,
		Fine:     &domain.Fine{Type: domain.FinePercent, Rate: "2.00"},
		Interest: &domain.Interest{Type: domain.InterestPercentPerMonth, Rate: "1.00", BusinessDays: true},
		Discount: &domain.Discount{Type: domain.DiscountFixedUntil, Until: []domain.DiscountUntil{
			{Date: created.AddDays(2), Amount: 100}, {Date: created.AddDays(5), Amount: 50}}},
		Abatement: &domain.Abatement{Type: domain.AbatementFixed, Amount: 10},
	})
	if err != nil {
		t.Fatalf("NewDueTerms: %v", err)
	}
	return &terms
}

func testChargeRoundTripsEveryField(t *testing.T, db *store.DB) {
	ctx := t.Context()
	s := fullSnapshot(t, liveA)
	c := domain.UnmarshalChargeFromStorage(s)
	evs := chargeEvents(t, c, domain.TxPaid, []domain.EventType{domain.EventChargeRefunded, domain.EventPaymentRefunded}, baseTime)
	mustCreate(t, db, c, evs, nil)

	assertSnapshot(t, mustGet(t, db, liveA, s.ID), s)
	byID, err := db.GetChargeByID(ctx, s.ID)
	if err != nil {
		t.Fatalf("GetChargeByID: %v", err)
	}
	assertSnapshot(t, byID, s)
	assertEvents(t, db, liveA, s.ID, evs)

	// Optional parts absent, nil slices and maps: they stay absent.
	s2 := fullSnapshot(t, liveA)
	s2.Pix, s2.Settlement, s2.Metadata, s2.Methods, s2.Due, s2.Subscription = nil, nil, nil, nil, nil, nil
	s2.Customer = domain.Customer{}
	mustCreate(t, db, domain.UnmarshalChargeFromStorage(s2), nil, nil)
	assertSnapshot(t, mustGet(t, db, liveA, s2.ID), s2)

	// Present but empty parts stay present.
	s3 := fullSnapshot(t, liveA)
	s3.Pix, s3.Settlement = &domain.PixDetails{}, &domain.Settlement{}
	s3.Metadata, s3.Methods = map[string]any{}, []domain.Method{}
	mustCreate(t, db, domain.UnmarshalChargeFromStorage(s3), nil, nil)
	assertSnapshot(t, mustGet(t, db, liveA, s3.ID), s3)
}

func testChargeRoundTripFromDomain(t *testing.T, db *store.DB) {
	c := newCharge(t, liveA, baseTime, func(p *domain.NewChargeParams) {
		p.Customer = domain.Customer{Name: "Ana", Document: "529.982.247-25"}
		p.ExpectedPayer = "52998224725"
		p.WebhookURL = "https://merchant.example.com/tx"
	})
	attachPix(t, c, baseTime.Add(time.Second))
	evs := chargeEvents(t, c, "", domain.CreationEvents(), baseTime)
	mustCreate(t, db, c, evs, nil)

	got := mustGet(t, db, liveA, c.ID())
	assertSnapshot(t, got, c.Snapshot())
	if got.Status() != domain.TxWaitingPayment || got.Pix() == nil {
		t.Errorf("status %s pix %v, want WAITING_PAYMENT with pix", got.Status(), got.Pix())
	}
	assertEvents(t, db, liveA, c.ID(), evs)

	// A due-date charge made by NewCharge keeps its terms and its expiry.
	created := domain.BrasiliaDate(baseTime)
	due := newCharge(t, liveA, baseTime, func(p *domain.NewChargeParams) {
		p.Customer = domain.Customer{Name: "Ana", Document: "529.982.247-25"}
		p.Due = &domain.DueTermsParams{Due: created.AddDays(20),
			Discount:  &domain.Discount{Type: domain.DiscountPercentPerDayBefore, Rate: "0.10", BusinessDays: true},
			Interest:  &domain.Interest{Type: domain.InterestAmountPerDay, Amount: 3},
			Abatement: &domain.Abatement{Type: domain.AbatementPercent, Rate: "5.00"}}
	})
	attachPix(t, due, baseTime.Add(time.Second))
	mustCreate(t, db, due, chargeEvents(t, due, "", domain.CreationEvents(), baseTime), nil)
	gotDue := mustGet(t, db, liveA, due.ID())
	assertSnapshot(t, gotDue, due.Snapshot())
	if _, err := gotDue.AmountDue(created); err != nil {
		t.Errorf("AmountDue of the stored due-date charge: %v", err)
	}
}

func testChargeScopeIsolation(t *testing.T, db *store.DB) {
	ctx := t.Context()
	c := newCharge(t, liveA, baseTime, nil)
	evs := chargeEvents(t, c, "", domain.CreationEvents(), baseTime)
	mustCreate(t, db, c, evs, nil)

	for _, other := range []ports.Scope{testA, liveB} {
		if _, err := db.GetCharge(ctx, other, c.ID()); !errors.Is(err, ports.ErrNotFound) {
			t.Errorf("GetCharge from %v: err %v, want ErrNotFound", other, err)
		}
		err := db.UpdateCharge(ctx, other, c.ID(), changeEvents(func(*domain.Charge) ([]domain.Event, error) {
			t.Error("fn called for a charge of another scope")
			return nil, nil
		}))
		if !errors.Is(err, ports.ErrNotFound) {
			t.Errorf("UpdateCharge from %v: err %v, want ErrNotFound", other, err)
		}
		list, _, err := db.ListCharges(ctx, ports.ChargeQuery{Scope: other, Limit: 10})
		if err != nil || len(list) != 0 {
			t.Errorf("ListCharges from %v: %d charges, err %v; want none", other, len(list), err)
		}
		if got, err := db.ListChargeEvents(ctx, other, c.ID()); err != nil || len(got) != 0 {
			t.Errorf("ListChargeEvents from %v: %d events, err %v; want none", other, len(got), err)
		}
	}
	if _, err := db.GetChargeByID(ctx, newRawID(t)); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("GetChargeByID of unknown id: err %v, want ErrNotFound", err)
	}
}
