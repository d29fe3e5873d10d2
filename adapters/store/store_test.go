package store_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

func TestSQLite(t *testing.T) {
	t.Parallel()
	runContract(t, func(t *testing.T) *store.DB { return openStore(t, testenv.SQLiteDSN(t)) })
}

func TestPostgres(t *testing.T) {
	t.Parallel()
	runContract(t, func(t *testing.T) *store.DB { return openStore(t, testenv.PostgresDSN(t)) })
}

func TestSQLiteInMemory(t *testing.T) {
	t.Parallel()
	db := openStore(t, "sqlite::memory:")
	scope := ports.Scope{AccountID: "acct_mem", Mode: domain.ModeLive}
	c := newCharge(t, scope, baseTime, nil)
	if err := db.CreateCharge(t.Context(), c, nil, nil); err != nil {
		t.Fatal(err)
	}
	// The single connection keeps the in-memory database alive between
	// calls.
	if _, err := db.GetCharge(t.Context(), scope, c.ID()); err != nil {
		t.Fatalf("GetCharge after CreateCharge: %v", err)
	}
}

func TestOpenRejectsUnknownURL(t *testing.T) {
	t.Parallel()
	_, err := store.Open(t.Context(), "mysql://root:secret@localhost/quita")
	if err == nil {
		t.Fatal("Open accepted a mysql:// URL")
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("error %q repeats the password", err)
	}
}

// openStore opens and migrates the database at dsn and closes it when t
// ends (before testenv drops a Postgres database: cleanups run last first).
func openStore(t testing.TB, dsn string) *store.DB {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return db
}

// runContract is the one suite every store must pass. open returns a
// migrated, empty store of its own for each test.
func runContract(t *testing.T, open func(t *testing.T) *store.DB) {
	tests := []struct {
		name string
		run  func(t *testing.T, db *store.DB)
	}{
		{"MigrateIsIdempotent", testMigrateIsIdempotent},
		{"ChargeRoundTripsEveryField", testChargeRoundTripsEveryField},
		{"ChargeRoundTripFromDomain", testChargeRoundTripFromDomain},
		{"ChargeScopeIsolation", testChargeScopeIsolation},
		{"DuplicateIdempotencyKeyWritesNothing", testDuplicateIdempotencyKeyWritesNothing},
		{"ConcurrentIdempotencyKeyHasOneWinner", testConcurrentIdempotencyKeyHasOneWinner},
		{"DuplicateChargeIDIsDuplicate", testDuplicateChargeIDIsDuplicate},
		{"UpdateChargeSavesStateAndEvents", testUpdateChargeSavesStateAndEvents},
		{"UpdateChargeRollsBackOnError", testUpdateChargeRollsBackOnError},
		{"UpdateChargeOutOfScope", testUpdateChargeOutOfScope},
		{"ConcurrentUpdatesLoseNothing", testConcurrentUpdatesLoseNothing},
		{"ListChargesPaginates", testListChargesPaginates},
		{"ListChargesFilters", testListChargesFilters},
		{"ListChargesCursorOutOfScope", testListChargesCursorOutOfScope},
		{"TimestampsOrderToTheMicrosecond", testTimestampsOrderToTheMicrosecond},
		{"ListOpenExpired", testListOpenExpired},
		{"ListPendingReturns", testListPendingReturns},
		{"AccountsUsersAndKeys", testAccountsUsersAndKeys},
		{"RevokedKeyIsNotFound", testRevokedKeyIsNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.run(t, open(t))
		})
	}
}

// baseTime has nanoseconds on purpose: the store keeps microseconds.
var baseTime = time.Date(2026, 3, 1, 12, 0, 5, 123456789, time.UTC)

var (
	liveA = ports.Scope{AccountID: "acct_a", Mode: domain.ModeLive}
	testA = ports.Scope{AccountID: "acct_a", Mode: domain.ModeTest}
	liveB = ports.Scope{AccountID: "acct_b", Mode: domain.ModeLive}
)

var links = domain.Links{CheckoutBase: "https://pay.example.com/c"}

func newRawID(t testing.TB) string {
	t.Helper()
	id, err := domain.NewRawID(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// newCharge builds a valid PENDING charge of scope created at now; edit
// adjusts the parameters first.
func newCharge(t testing.TB, scope ports.Scope, now time.Time, edit func(*domain.NewChargeParams)) *domain.Charge {
	t.Helper()
	p := domain.NewChargeParams{
		ID:          newRawID(t),
		AccountID:   scope.AccountID,
		Mode:        scope.Mode,
		Amount:      1990,
		Currency:    "BRL",
		Methods:     []domain.Method{domain.MethodPix},
		Description: "Pedido 42",
		Metadata:    map[string]any{"order": "42"},
		Now:         now,
	}
	if edit != nil {
		edit(&p)
	}
	c, err := domain.NewCharge(p)
	if err != nil {
		t.Fatalf("NewCharge: %v", err)
	}
	return c
}

func attachPix(t testing.TB, c *domain.Charge, now time.Time) {
	t.Helper()
	pix := domain.PixDetails{
		BRCode:   "00020101021226...6304ABCD",
		TxID:     domain.DeriveTxID(c.AccountID(), string(c.Mode()), c.ID()),
		Location: "pix.example.com/qr/v2/" + c.ID(),
	}
	if err := c.AttachPix(pix, "sandbox", "ref-"+c.ID(), now); err != nil {
		t.Fatalf("AttachPix: %v", err)
	}
}

func chargeEvents(t testing.TB, c *domain.Charge, prev domain.TxStatus, types []domain.EventType, now time.Time) []domain.Event {
	t.Helper()
	evs, err := domain.NewChargeEvents(c, prev, types, links, func() (string, error) {
		return domain.NewRawID(rand.Reader)
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func mustCreate(t testing.TB, db *store.DB, c *domain.Charge, evs []domain.Event, rec *ports.IdempotencyRecord) {
	t.Helper()
	if err := db.CreateCharge(context.Background(), c, evs, rec); err != nil {
		t.Fatalf("CreateCharge %s: %v", c.ID(), err)
	}
}

func mustGet(t testing.TB, db *store.DB, scope ports.Scope, id string) *domain.Charge {
	t.Helper()
	c, err := db.GetCharge(context.Background(), scope, id)
	if err != nil {
		t.Fatalf("GetCharge %s: %v", id, err)
	}
	return c
}

// stored is what a snapshot looks like after a trip through the store:
// every instant in UTC, truncated to the microsecond.
func stored(s domain.ChargeSnapshot) domain.ChargeSnapshot {
	s.ExpiresAt, s.CreatedAt, s.UpdatedAt = micro(s.ExpiresAt), micro(s.CreatedAt), micro(s.UpdatedAt)
	s.Details.MBExpiresAt, s.Details.BoletoExpiresAt = micro(s.Details.MBExpiresAt), micro(s.Details.BoletoExpiresAt)
	if s.Pix != nil {
		s.Pix.ExpiresAt = micro(s.Pix.ExpiresAt)
	}
	if s.Settlement != nil {
		s.Settlement.PaidAt = micro(s.Settlement.PaidAt)
	}
	return s
}

func micro(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Microsecond)
}

func storedEvents(evs []domain.Event) []domain.Event {
	out := slices.Clone(evs)
	for i := range out {
		out[i].CreatedAt = micro(out[i].CreatedAt)
	}
	return out
}

func assertSnapshot(t testing.TB, got *domain.Charge, want domain.ChargeSnapshot) {
	t.Helper()
	if g, w := got.Snapshot(), stored(want); !reflect.DeepEqual(g, w) {
		t.Errorf("stored charge differs\n got: %+v\nwant: %+v", describe(g), describe(w))
	}
}

// describe spells out a snapshot's pointers for failure messages.
func describe(s domain.ChargeSnapshot) string {
	return fmt.Sprintf("%+v pix=%+v settlement=%+v", s, s.Pix, s.Settlement)
}

func assertEvents(t testing.TB, db *store.DB, scope ports.Scope, chargeID string, want []domain.Event) {
	t.Helper()
	got, err := db.ListChargeEvents(context.Background(), scope, chargeID)
	if err != nil {
		t.Fatalf("ListChargeEvents: %v", err)
	}
	if w := storedEvents(want); !reflect.DeepEqual(got, w) && (len(got) != 0 || len(w) != 0) {
		t.Errorf("events of %s differ\n got: %v\nwant: %v", chargeID, eventTypes(got), eventTypes(w))
		for i := range min(len(got), len(w)) {
			if !reflect.DeepEqual(got[i], w[i]) {
				t.Errorf("event %d\n got: %+v\nwant: %+v", i, got[i], w[i])
			}
		}
	}
}

func eventTypes(evs []domain.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, string(e.Type))
	}
	return out
}

func testMigrateIsIdempotent(t *testing.T, db *store.DB) {
	c := newCharge(t, liveA, baseTime, nil)
	mustCreate(t, db, c, nil, nil)
	for range 2 {
		if err := db.Migrate(t.Context()); err != nil {
			t.Fatalf("Migrate again: %v", err)
		}
	}
	mustGet(t, db, liveA, c.ID())
	if err := db.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	if d := db.Dialect(); d != store.DialectPostgres && d != store.DialectSQLite {
		t.Errorf("Dialect() = %q", d)
	}
	if db.Bun() == nil {
		t.Error("Bun() = nil")
	}
}

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
		ExpiresAt:      baseTime.Add(time.Hour),
		CreatedAt:      baseTime,
		UpdatedAt:      baseTime.Add(10*time.Minute + 1),
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
	s2.Pix, s2.Settlement, s2.Metadata, s2.Methods = nil, nil, nil, nil
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

func idemRecord(scope ports.Scope, key, resourceID string) *ports.IdempotencyRecord {
	return &ports.IdempotencyRecord{
		IdempotencyKey: ports.IdempotencyKey{Scope: scope, Key: key},
		Fingerprint:    "fp-" + resourceID,
		ResourceID:     resourceID,
		StatusCode:     201,
		Body:           []byte(`{"id":"ch_` + resourceID + `"}`),
		CreatedAt:      baseTime,
	}
}

func testDuplicateIdempotencyKeyWritesNothing(t *testing.T, db *store.DB) {
	ctx := t.Context()
	first := newCharge(t, liveA, baseTime, nil)
	rec := idemRecord(liveA, "order-42-attempt", first.ID())
	mustCreate(t, db, first, chargeEvents(t, first, "", domain.CreationEvents(), baseTime), rec)

	got, err := db.GetIdempotencyRecord(ctx, rec.IdempotencyKey)
	if err != nil {
		t.Fatalf("GetIdempotencyRecord: %v", err)
	}
	want := *rec
	want.CreatedAt = micro(want.CreatedAt)
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("idempotency record\n got: %+v\nwant: %+v", *got, want)
	}

	second := newCharge(t, liveA, baseTime, nil)
	err = db.CreateCharge(ctx, second, chargeEvents(t, second, "", domain.CreationEvents(), baseTime),
		idemRecord(liveA, rec.Key, second.ID()))
	if !errors.Is(err, ports.ErrIdempotencyKeyExists) {
		t.Fatalf("second CreateCharge with the key: err %v, want ErrIdempotencyKeyExists", err)
	}
	if _, err := db.GetCharge(ctx, liveA, second.ID()); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("the refused charge was written (GetCharge err %v)", err)
	}
	if evs, err := db.ListChargeEvents(ctx, liveA, second.ID()); err != nil || len(evs) != 0 {
		t.Errorf("the refused charge's events were written: %d, err %v", len(evs), err)
	}
	if got, _ := db.GetIdempotencyRecord(ctx, rec.IdempotencyKey); got == nil || got.ResourceID != first.ID() {
		t.Errorf("the record now points at %v, want the first charge", got)
	}

	// The key is scoped: the same key in test mode or another account is
	// a different key.
	for _, other := range []ports.Scope{testA, liveB} {
		c := newCharge(t, other, baseTime, nil)
		if err := db.CreateCharge(ctx, c, nil, idemRecord(other, rec.Key, c.ID())); err != nil {
			t.Errorf("same key in scope %v: %v", other, err)
		}
	}
	if _, err := db.GetIdempotencyRecord(ctx, ports.IdempotencyKey{Scope: liveA, Key: "unused"}); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("GetIdempotencyRecord of an unused key: err %v, want ErrNotFound", err)
	}
}

func testConcurrentIdempotencyKeyHasOneWinner(t *testing.T, db *store.DB) {
	const n = 8
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []string
	)
	for range n {
		c := newCharge(t, liveA, baseTime, nil)
		evs := chargeEvents(t, c, "", domain.CreationEvents(), baseTime)
		wg.Go(func() {
			err := db.CreateCharge(context.Background(), c, evs, idemRecord(liveA, "same-key-everywhere", c.ID()))
			switch {
			case err == nil:
				mu.Lock()
				winners = append(winners, c.ID())
				mu.Unlock()
			case !errors.Is(err, ports.ErrIdempotencyKeyExists):
				t.Errorf("CreateCharge: %v", err)
			}
		})
	}
	wg.Wait()
	if len(winners) != 1 {
		t.Fatalf("%d creates won the key, want exactly 1", len(winners))
	}
	list, _, err := db.ListCharges(t.Context(), ports.ChargeQuery{Scope: liveA, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].ID() != winners[0] {
		t.Errorf("%d charges stored, want only the winner", len(list))
	}
}

func testDuplicateChargeIDIsDuplicate(t *testing.T, db *store.DB) {
	c := newCharge(t, liveA, baseTime, nil)
	mustCreate(t, db, c, nil, nil)
	err := db.CreateCharge(t.Context(), c, nil, idemRecord(liveA, "fresh-key", c.ID()))
	if !errors.Is(err, ports.ErrDuplicate) || errors.Is(err, ports.ErrIdempotencyKeyExists) {
		t.Fatalf("CreateCharge of an existing id: err %v, want ErrDuplicate", err)
	}
	// The transaction rolled back: the fresh key is still free.
	if _, err := db.GetIdempotencyRecord(t.Context(), ports.IdempotencyKey{Scope: liveA, Key: "fresh-key"}); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("key of the failed create: err %v, want ErrNotFound", err)
	}
}

func testUpdateChargeSavesStateAndEvents(t *testing.T, db *store.DB) {
	ctx := t.Context()
	c := newCharge(t, liveA, baseTime, nil)
	created := chargeEvents(t, c, "", domain.CreationEvents(), baseTime)
	mustCreate(t, db, c, created, nil)

	var want domain.ChargeSnapshot
	var changed []domain.Event
	at := baseTime.Add(2 * time.Second)
	err := db.UpdateCharge(ctx, liveA, c.ID(), changeEvents(func(c *domain.Charge) ([]domain.Event, error) {
		prev := c.Status()
		attachPix(t, c, at)
		if err := c.Cancel(at.Add(time.Second)); err != nil {
			return nil, err
		}
		want = c.Snapshot()
		changed = chargeEvents(t, c, prev, domain.TransitionEvents(prev, c.Status()), at)
		return changed, nil
	}))
	if err != nil {
		t.Fatalf("UpdateCharge: %v", err)
	}
	got := mustGet(t, db, liveA, c.ID())
	assertSnapshot(t, got, want)
	if got.Status() != domain.TxCancelled {
		t.Errorf("status %s, want CANCELLED", got.Status())
	}
	assertEvents(t, db, liveA, c.ID(), append(created, changed...))

	// No events is fine too.
	err = db.UpdateCharge(ctx, liveA, c.ID(), changeEvents(func(*domain.Charge) ([]domain.Event, error) { return nil, nil }))
	if err != nil {
		t.Fatalf("UpdateCharge without events: %v", err)
	}
	assertEvents(t, db, liveA, c.ID(), append(created, changed...))
}

func testUpdateChargeRollsBackOnError(t *testing.T, db *store.DB) {
	ctx := t.Context()
	c := newCharge(t, liveA, baseTime, nil)
	created := chargeEvents(t, c, "", domain.CreationEvents(), baseTime)
	mustCreate(t, db, c, created, nil)
	before := mustGet(t, db, liveA, c.ID()).Snapshot()

	errBoom := errors.New("acquirer said no")
	err := db.UpdateCharge(ctx, liveA, c.ID(), changeEvents(func(c *domain.Charge) ([]domain.Event, error) {
		attachPix(t, c, baseTime.Add(time.Second))
		return chargeEvents(t, c, domain.TxPending, []domain.EventType{domain.EventPaymentStatusChanged}, baseTime), errBoom
	}))
	if err != errBoom { // fn's error must come back unchanged, not even wrapped
		t.Fatalf("UpdateCharge returned %v, want fn's error itself", err)
	}
	assertSnapshot(t, mustGet(t, db, liveA, c.ID()), before)
	assertEvents(t, db, liveA, c.ID(), created)

	// A domain sentinel comes back as is, too.
	err = db.UpdateCharge(ctx, liveA, c.ID(), changeEvents(func(c *domain.Charge) ([]domain.Event, error) {
		return nil, c.MarkReturned(baseTime)
	}))
	if !errors.Is(err, domain.ErrInvalidTransition) {
		t.Fatalf("UpdateCharge: err %v, want ErrInvalidTransition", err)
	}
}

func testUpdateChargeOutOfScope(t *testing.T, db *store.DB) {
	err := db.UpdateCharge(t.Context(), liveA, newRawID(t), changeEvents(func(*domain.Charge) ([]domain.Event, error) {
		t.Error("fn called for a missing charge")
		return nil, nil
	}))
	if !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("UpdateCharge of a missing charge: err %v, want ErrNotFound", err)
	}
}

// testConcurrentUpdatesLoseNothing runs read-modify-write increments of
// refunded_amount from many goroutines, each holding the row a little while
// so that without the lock they would interleave and overwrite each other.
func testConcurrentUpdatesLoseNothing(t *testing.T, db *store.DB) {
	concurrentIncrements(t, db)
}

// TestSQLiteTwoHandlesLoseNothing does the same through two stores on one
// file, as two processes would: each transaction takes the file's write
// lock at BEGIN (IMMEDIATE) and the other waits (busy_timeout).
func TestSQLiteTwoHandlesLoseNothing(t *testing.T) {
	t.Parallel()
	dsn := testenv.SQLiteDSN(t)
	concurrentIncrements(t, openStore(t, dsn), openStore(t, dsn))
}

func concurrentIncrements(t *testing.T, dbs ...*store.DB) {
	const n = 20
	c := newCharge(t, liveA, baseTime, func(p *domain.NewChargeParams) { p.Amount = 1000 })
	mustCreate(t, dbs[0], c, nil, nil)

	var wg sync.WaitGroup
	for i := range n {
		db := dbs[i%len(dbs)]
		wg.Go(func() {
			err := db.UpdateCharge(context.Background(), liveA, c.ID(), changeEvents(func(c *domain.Charge) ([]domain.Event, error) {
				s := c.Snapshot()
				read := s.RefundedAmount
				time.Sleep(2 * time.Millisecond) // widen the window a lost update needs
				s.RefundedAmount = read + 1
				s.Metadata[fmt.Sprintf("step_%02d", read)] = float64(i)
				// fn may change the charge only through *c: replace it.
				*c = *domain.UnmarshalChargeFromStorage(s)
				return chargeEvents(t, c, c.Status(), []domain.EventType{domain.EventPaymentStatusChanged}, baseTime), nil
			}))
			if err != nil {
				t.Errorf("UpdateCharge: %v", err)
			}
		})
	}
	wg.Wait()

	got := mustGet(t, dbs[0], liveA, c.ID()).Snapshot()
	if got.RefundedAmount != n {
		t.Errorf("refunded_amount = %d after %d increments: updates were lost", got.RefundedAmount, n)
	}
	for i := range n {
		if _, ok := got.Metadata[fmt.Sprintf("step_%02d", i)]; !ok {
			t.Errorf("no update saw the counter at %d", i)
		}
	}
	evs, err := dbs[0].ListChargeEvents(t.Context(), liveA, c.ID())
	if err != nil || len(evs) != n {
		t.Errorf("%d events (err %v), want %d", len(evs), err, n)
	}
}

// seedList creates n charges in scope, two per microsecond so that ties on
// created_at are broken by id, in random order, and returns them newest
// first as the store must list them.
func seedList(t *testing.T, db *store.DB, scope ports.Scope, n int, edit func(i int, p *domain.NewChargeParams)) []*domain.Charge {
	t.Helper()
	charges := make([]*domain.Charge, n)
	for i := range n {
		charges[i] = newCharge(t, scope, baseTime.Add(time.Duration(i/2)*time.Microsecond), func(p *domain.NewChargeParams) {
			if edit != nil {
				edit(i, p)
			}
		})
	}
	shuffled := slices.Clone(charges)
	mrand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for _, c := range shuffled {
		mustCreate(t, db, c, nil, nil)
	}
	sort.Slice(charges, func(i, j int) bool {
		a, b := charges[i].Snapshot(), charges[j].Snapshot()
		if !micro(a.CreatedAt).Equal(micro(b.CreatedAt)) {
			return a.CreatedAt.After(b.CreatedAt)
		}
		return a.ID > b.ID
	})
	return charges
}

func ids(cs []*domain.Charge) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID()
	}
	return out
}

// listAll pages through q and checks hasMore on every page.
func listAll(t *testing.T, db *store.DB, q ports.ChargeQuery) (all []*domain.Charge, pages int) {
	t.Helper()
	for {
		page, more, err := db.ListCharges(t.Context(), q)
		if err != nil {
			t.Fatalf("ListCharges %+v: %v", q, err)
		}
		pages++
		all = append(all, page...)
		if !more {
			if len(page) > q.Limit {
				t.Fatalf("page of %d for limit %d", len(page), q.Limit)
			}
			return all, pages
		}
		if len(page) != q.Limit {
			t.Fatalf("page %d has %d charges and hasMore, want a full page of %d", pages, len(page), q.Limit)
		}
		q.StartingAfter = page[len(page)-1].ID()
		if pages > 100 {
			t.Fatal("pagination does not end")
		}
	}
}

func testListChargesPaginates(t *testing.T, db *store.DB) {
	want := seedList(t, db, liveA, 25, nil)
	seedList(t, db, testA, 3, nil) // other scopes must not show
	seedList(t, db, liveB, 3, nil)

	got, pages := listAll(t, db, ports.ChargeQuery{Scope: liveA, Limit: 10})
	if pages != 3 {
		t.Errorf("%d pages of 10 for 25 charges, want 3", pages)
	}
	if !slices.Equal(ids(got), ids(want)) {
		t.Errorf("listing order\n got: %v\nwant: %v", ids(got), ids(want))
	}

	// An exact multiple of the limit ends with hasMore false on the last
	// full page.
	page, more, err := db.ListCharges(t.Context(), ports.ChargeQuery{Scope: liveA, Limit: 5, StartingAfter: want[19].ID()})
	if err != nil || more || len(page) != 5 {
		t.Errorf("last full page: %d charges, hasMore %v, err %v; want 5, false", len(page), more, err)
	}
	for _, limit := range []int{0, 101} {
		if _, _, err := db.ListCharges(t.Context(), ports.ChargeQuery{Scope: liveA, Limit: limit}); err == nil {
			t.Errorf("limit %d accepted", limit)
		}
	}
}

func testListChargesFilters(t *testing.T, db *store.DB) {
	docs := []string{"529.982.247-25", "111.444.777-35", ""}
	all := seedList(t, db, liveA, 30, func(i int, p *domain.NewChargeParams) {
		p.Customer.Document = docs[i%3]
	})
	// Open a third of them for payment and cancel another third.
	status := map[string]domain.TxStatus{}
	for i, c := range all {
		switch i % 3 {
		case 0:
			status[c.ID()] = domain.TxPending
			continue
		case 1:
			status[c.ID()] = domain.TxWaitingPayment
		case 2:
			status[c.ID()] = domain.TxCancelled
		}
		err := db.UpdateCharge(t.Context(), liveA, c.ID(), changeEvents(func(c *domain.Charge) ([]domain.Event, error) {
			if status[c.ID()] == domain.TxCancelled {
				return nil, c.Cancel(baseTime.Add(time.Hour))
			}
			attachPix(t, c, baseTime.Add(time.Hour))
			return nil, nil
		}))
		if err != nil {
			t.Fatal(err)
		}
	}
	filter := func(keep func(c domain.ChargeSnapshot) bool) []string {
		var out []string
		for _, c := range all {
			if s := c.Snapshot(); keep(s) {
				out = append(out, s.ID)
			}
		}
		return out
	}
	after, before := micro(baseTime.Add(3*time.Microsecond)), micro(baseTime.Add(11*time.Microsecond))
	tests := []struct {
		name string
		q    ports.ChargeQuery
		want []string
	}{
		{"statuses", ports.ChargeQuery{Statuses: []domain.TxStatus{domain.TxPending, domain.TxCancelled}},
			filter(func(s domain.ChargeSnapshot) bool { return status[s.ID] != domain.TxWaitingPayment })},
		{"created range inclusive", ports.ChargeQuery{CreatedAfter: &after, CreatedBefore: &before},
			filter(func(s domain.ChargeSnapshot) bool {
				ct := micro(s.CreatedAt)
				return !ct.Before(after) && !ct.After(before)
			})},
		{"customer document normalised", ports.ChargeQuery{CustomerDocument: "52998224725"},
			filter(func(s domain.ChargeSnapshot) bool { return s.Customer.Document == docs[0] })},
		{"customer document as typed", ports.ChargeQuery{CustomerDocument: "111.444.777-35"},
			filter(func(s domain.ChargeSnapshot) bool { return s.Customer.Document == docs[1] })},
		{"document that normalises to nothing", ports.ChargeQuery{CustomerDocument: " ./- "}, nil},
		{"all filters", ports.ChargeQuery{
			Statuses: []domain.TxStatus{domain.TxWaitingPayment}, CustomerDocument: "111.444.777-35",
			CreatedAfter: &after, CreatedBefore: &before,
		}, filter(func(s domain.ChargeSnapshot) bool {
			ct := micro(s.CreatedAt)
			return status[s.ID] == domain.TxWaitingPayment && s.Customer.Document == docs[1] &&
				!ct.Before(after) && !ct.After(before)
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.q
			q.Scope, q.Limit = liveA, 3 // small pages: filters must hold across cursors
			got, _ := listAll(t, db, q)
			if !slices.Equal(ids(got), tt.want) {
				t.Errorf("\n got: %v\nwant: %v", ids(got), tt.want)
			}
		})
	}
}

func testListChargesCursorOutOfScope(t *testing.T, db *store.DB) {
	seedList(t, db, liveA, 3, nil)
	other := seedList(t, db, liveB, 1, nil)
	for _, cursor := range []string{newRawID(t), other[0].ID()} {
		_, _, err := db.ListCharges(t.Context(), ports.ChargeQuery{Scope: liveA, Limit: 10, StartingAfter: cursor})
		if !errors.Is(err, ports.ErrNotFound) {
			t.Errorf("cursor %s: err %v, want ErrNotFound", cursor, err)
		}
	}
}

// testTimestampsOrderToTheMicrosecond stores instants whose textual forms
// would sort wrongly with trimmed fractions (…05Z after …05.5Z) and checks
// order and inclusive bounds to the microsecond.
func testTimestampsOrderToTheMicrosecond(t *testing.T, db *store.DB) {
	sec := time.Date(2026, 3, 1, 12, 0, 5, 0, time.UTC)
	offsets := []time.Duration{
		-time.Microsecond, 0, time.Microsecond, 2 * time.Microsecond, 10 * time.Microsecond,
		100 * time.Microsecond, 100 * time.Millisecond, 500 * time.Millisecond,
		999999 * time.Microsecond, time.Second, time.Second + 1*time.Microsecond,
	}
	byOffset := map[time.Duration]string{}
	var charges []*domain.Charge
	for _, off := range offsets {
		c := newCharge(t, liveA, sec.Add(off), nil)
		byOffset[off] = c.ID()
		charges = append(charges, c)
	}
	mrand.Shuffle(len(charges), func(i, j int) { charges[i], charges[j] = charges[j], charges[i] })
	for _, c := range charges {
		mustCreate(t, db, c, nil, nil)
	}
	idsOf := func(offs ...time.Duration) []string {
		var out []string
		for i := len(offs) - 1; i >= 0; i-- { // newest first
			out = append(out, byOffset[offs[i]])
		}
		return out
	}
	list := func(after, before *time.Time) []string {
		got, _ := listAll(t, db, ports.ChargeQuery{Scope: liveA, Limit: 100, CreatedAfter: after, CreatedBefore: before})
		return ids(got)
	}
	at := func(d time.Duration) *time.Time { v := sec.Add(d); return &v }

	if got, want := list(nil, nil), idsOf(offsets...); !slices.Equal(got, want) {
		t.Errorf("order\n got: %v\nwant: %v", got, want)
	}
	checks := []struct {
		name          string
		after, before *time.Time
		want          []string
	}{
		{"after is inclusive", at(time.Microsecond), nil, idsOf(offsets[2:]...)},
		{"before is inclusive", nil, at(0), idsOf(offsets[:2]...)},
		{"one microsecond window", at(time.Microsecond), at(time.Microsecond), idsOf(time.Microsecond)},
		{"after between microseconds", at(500 * time.Nanosecond), nil, idsOf(offsets[2:]...)},
		{"before between microseconds", nil, at(1500 * time.Nanosecond), idsOf(offsets[:3]...)},
		{"whole second", at(0), at(999999 * time.Microsecond), idsOf(offsets[1:9]...)},
	}
	for _, c := range checks {
		if got := list(c.after, c.before); !slices.Equal(got, c.want) {
			t.Errorf("%s\n got: %v\nwant: %v", c.name, got, c.want)
		}
	}
}

func testListOpenExpired(t *testing.T, db *store.DB) {
	ctx := t.Context()
	sixty := int64(60)
	mk := func(scope ports.Scope, created time.Time, open bool) *domain.Charge {
		c := newCharge(t, scope, created, func(p *domain.NewChargeParams) { p.ExpiresIn = &sixty })
		if open {
			attachPix(t, c, created)
		} else if err := c.Cancel(created); err != nil {
			t.Fatal(err)
		}
		mustCreate(t, db, c, nil, nil)
		return c
	}
	now := baseTime.Truncate(time.Second).Add(time.Hour)
	earliest := mk(liveA, now.Add(-3*time.Minute), true)
	pending := newCharge(t, liveB, now.Add(-2*time.Minute), func(p *domain.NewChargeParams) { p.ExpiresIn = &sixty })
	mustCreate(t, db, pending, nil, nil) // PENDING is open too
	exactlyNow := mk(testA, now.Add(-time.Minute), true)
	mk(liveA, now.Add(-3*time.Minute), false)          // cancelled: not open
	mk(liveA, now.Add(-time.Minute+time.Second), true) // expires a second from now

	refs, err := db.ListOpenExpired(ctx, now, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []ports.ChargeRef{
		{Scope: liveA, ID: earliest.ID()},
		{Scope: liveB, ID: pending.ID()},
		{Scope: testA, ID: exactlyNow.ID()},
	}
	if !slices.Equal(refs, want) {
		t.Errorf("ListOpenExpired\n got: %v\nwant: %v", refs, want)
	}
	if refs, err := db.ListOpenExpired(ctx, now, 2); err != nil || !slices.Equal(refs, want[:2]) {
		t.Errorf("ListOpenExpired with limit 2: %v, err %v", refs, err)
	}

	// Once expired, a charge is no longer listed.
	err = db.UpdateCharge(ctx, liveA, earliest.ID(), changeEvents(func(c *domain.Charge) ([]domain.Event, error) {
		return nil, c.Expire(now)
	}))
	if err != nil {
		t.Fatal(err)
	}
	if refs, err := db.ListOpenExpired(ctx, now, 10); err != nil || !slices.Equal(refs, want[1:]) {
		t.Errorf("after expiring one: %v, err %v", refs, err)
	}
}

func testListPendingReturns(t *testing.T, db *store.DB) {
	ctx := t.Context()
	mismatched := func(scope ports.Scope, paidAt time.Time) *domain.Charge {
		c := newCharge(t, scope, baseTime, func(p *domain.NewChargeParams) {
			p.Customer.Name = "Ana"
			p.ExpectedPayer = "52998224725"
		})
		attachPix(t, c, baseTime)
		outcome, err := c.SettlePix(domain.PixPayment{
			EndToEndID: "E" + c.ID(), Amount: c.Amount(), PayerTaxID: "11144477735", PaidAt: paidAt,
		}, domain.FeeSchedule{})
		if err != nil || outcome != domain.OutcomePayerMismatch {
			t.Fatalf("SettlePix: %v, %v", outcome, err)
		}
		mustCreate(t, db, c, nil, nil)
		return c
	}
	second := mismatched(liveB, baseTime.Add(2*time.Minute))
	first := mismatched(liveA, baseTime.Add(time.Minute))
	done := mismatched(liveA, baseTime.Add(30*time.Second))
	mustCreate(t, db, newCharge(t, liveA, baseTime, nil), nil, nil)
	err := db.UpdateCharge(ctx, liveA, done.ID(), changeEvents(func(c *domain.Charge) ([]domain.Event, error) {
		return nil, c.MarkReturned(baseTime.Add(5 * time.Minute))
	}))
	if err != nil {
		t.Fatal(err)
	}
	refs, err := db.ListPendingReturns(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []ports.ChargeRef{{Scope: liveA, ID: first.ID()}, {Scope: liveB, ID: second.ID()}}
	if !slices.Equal(refs, want) {
		t.Errorf("ListPendingReturns\n got: %v\nwant: %v", refs, want)
	}
	if refs, err := db.ListPendingReturns(ctx, 1); err != nil || !slices.Equal(refs, want[:1]) {
		t.Errorf("ListPendingReturns with limit 1: %v, err %v", refs, err)
	}
}

func newAccount(t testing.TB, db *store.DB, email string) (domain.Account, ports.User, []ports.APIKeyRecord) {
	t.Helper()
	a := domain.Account{
		ID: domain.PrefixAccount + newRawID(t), Name: "Loja da Ana", MerchantName: "LOJA DA ANA",
		MerchantCity: "SAO PAULO", DefaultExpiry: 30 * time.Minute, CreatedAt: baseTime,
	}
	u := ports.User{
		ID: domain.PrefixUser + newRawID(t), AccountID: a.ID, Email: email,
		PasswordHash: "$argon2id$v=19$m=65536,t=1,p=4$c2FsdA$aGFzaA", CreatedAt: baseTime,
	}
	var keys []ports.APIKeyRecord
	for i, mode := range []domain.Mode{domain.ModeLive, domain.ModeTest} {
		keys = append(keys, newKey(t, a.ID, mode, baseTime.Add(time.Duration(i)*time.Second)))
	}
	if err := db.CreateAccount(t.Context(), a, u, keys); err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
	return a, u, keys
}

func newKey(t testing.TB, accountID string, mode domain.Mode, at time.Time) ports.APIKeyRecord {
	t.Helper()
	secret, err := domain.NewAPIKey(mode, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return ports.APIKeyRecord{
		ID: domain.PrefixAPIKey + newRawID(t), AccountID: accountID, Mode: mode,
		Fingerprint: domain.APIKeyFingerprint(secret), Prefix: domain.APIKeyPrefix(secret),
		Label: string(mode) + " key", CreatedAt: at,
	}
}

func testAccountsUsersAndKeys(t *testing.T, db *store.DB) {
	ctx := t.Context()
	a, u, keys := newAccount(t, db, "Ana@Example.com")

	gotA, err := db.GetAccount(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantA := a
	wantA.CreatedAt = micro(a.CreatedAt)
	if !reflect.DeepEqual(*gotA, wantA) {
		t.Errorf("account\n got: %+v\nwant: %+v", *gotA, wantA)
	}
	if _, err := db.GetAccount(ctx, "acct_missing"); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("GetAccount of unknown id: err %v, want ErrNotFound", err)
	}

	gotU, err := db.GetUserByEmail(ctx, "ana@EXAMPLE.com")
	if err != nil {
		t.Fatalf("GetUserByEmail (other case): %v", err)
	}
	wantU := u
	wantU.CreatedAt = micro(u.CreatedAt)
	if !reflect.DeepEqual(*gotU, wantU) {
		t.Errorf("user\n got: %+v\nwant: %+v", *gotU, wantU)
	}
	if _, err := db.GetUserByEmail(ctx, "nobody@example.com"); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("GetUserByEmail of unknown address: err %v, want ErrNotFound", err)
	}

	for _, k := range keys {
		gotK, gotAcct, err := db.LookupAPIKey(ctx, k.Fingerprint)
		if err != nil {
			t.Fatalf("LookupAPIKey: %v", err)
		}
		wantK := k
		wantK.CreatedAt = micro(k.CreatedAt)
		if !reflect.DeepEqual(*gotK, wantK) || !reflect.DeepEqual(*gotAcct, wantA) {
			t.Errorf("LookupAPIKey\n got: %+v %+v\nwant: %+v %+v", *gotK, *gotAcct, wantK, wantA)
		}
	}
	if _, _, err := db.LookupAPIKey(ctx, strings.Repeat("0", 64)); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("LookupAPIKey of unknown fingerprint: err %v, want ErrNotFound", err)
	}

	// A second account with the same e-mail in another case is refused,
	// and nothing of it is written.
	b := domain.Account{ID: "acct_b2", Name: "B", CreatedAt: baseTime}
	dupUser := ports.User{ID: "usr_b2", AccountID: b.ID, Email: "ANA@example.com", PasswordHash: "x", CreatedAt: baseTime}
	err = db.CreateAccount(ctx, b, dupUser, []ports.APIKeyRecord{newKey(t, b.ID, domain.ModeLive, baseTime)})
	if !errors.Is(err, ports.ErrDuplicate) {
		t.Fatalf("CreateAccount with a taken e-mail: err %v, want ErrDuplicate", err)
	}
	if _, err := db.GetAccount(ctx, b.ID); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("the refused account was written (err %v)", err)
	}
	if n, err := db.CountAccounts(ctx); err != nil || n != 1 {
		t.Errorf("CountAccounts = %d, %v; want 1", n, err)
	}

	// Extra keys: created, listed newest first, fingerprints unique.
	extra := newKey(t, a.ID, domain.ModeLive, baseTime.Add(time.Minute))
	if err := db.CreateAPIKey(ctx, extra); err != nil {
		t.Fatalf("CreateAPIKey: %v", err)
	}
	again := newKey(t, a.ID, domain.ModeTest, baseTime)
	again.Fingerprint = extra.Fingerprint
	if err := db.CreateAPIKey(ctx, again); !errors.Is(err, ports.ErrDuplicate) {
		t.Errorf("CreateAPIKey with a taken fingerprint: err %v, want ErrDuplicate", err)
	}
	list, err := db.ListAPIKeys(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	var gotIDs []string
	for _, k := range list {
		gotIDs = append(gotIDs, k.ID)
	}
	if want := []string{extra.ID, keys[1].ID, keys[0].ID}; !slices.Equal(gotIDs, want) {
		t.Errorf("ListAPIKeys = %v, want %v", gotIDs, want)
	}
}

func testRevokedKeyIsNotFound(t *testing.T, db *store.DB) {
	ctx := t.Context()
	a, _, keys := newAccount(t, db, "revoke@example.com")
	live, test := keys[0], keys[1]
	revokedAt := baseTime.Add(time.Hour + 7*time.Nanosecond)

	if err := db.RevokeAPIKey(ctx, "acct_other", live.ID, revokedAt); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("revoking another account's key: err %v, want ErrNotFound", err)
	}
	if _, _, err := db.LookupAPIKey(ctx, live.Fingerprint); err != nil {
		t.Fatalf("key revoked through another account: %v", err)
	}
	if err := db.RevokeAPIKey(ctx, a.ID, live.ID, revokedAt); err != nil {
		t.Fatalf("RevokeAPIKey: %v", err)
	}
	if _, _, err := db.LookupAPIKey(ctx, live.Fingerprint); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("LookupAPIKey of a revoked key: err %v, want ErrNotFound", err)
	}
	if _, _, err := db.LookupAPIKey(ctx, test.Fingerprint); err != nil {
		t.Errorf("the other key stopped working: %v", err)
	}
	// Revoking again succeeds and keeps the first time.
	if err := db.RevokeAPIKey(ctx, a.ID, live.ID, revokedAt.Add(time.Hour)); err != nil {
		t.Errorf("RevokeAPIKey again: %v", err)
	}
	if err := db.RevokeAPIKey(ctx, a.ID, "key_missing", revokedAt); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("RevokeAPIKey of unknown key: err %v, want ErrNotFound", err)
	}
	list, err := db.ListAPIKeys(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range list {
		switch k.ID {
		case live.ID:
			if k.RevokedAt == nil || !k.RevokedAt.Equal(micro(revokedAt)) {
				t.Errorf("revoked_at = %v, want %v", k.RevokedAt, micro(revokedAt))
			}
		case test.ID:
			if k.RevokedAt != nil {
				t.Errorf("untouched key has revoked_at %v", k.RevokedAt)
			}
		}
	}
}

// TestPostgresConcurrentMigrate starts several stores on one new database
// at once, as several quitad processes would: the advisory lock lets one
// migrate while the others wait and then find nothing to do.
func TestPostgresConcurrentMigrate(t *testing.T) {
	t.Parallel()
	dsn := testenv.PostgresDSN(t)
	const n = 4
	dbs := make([]*store.DB, n)
	for i := range dbs {
		db, err := store.Open(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	var wg sync.WaitGroup
	for _, db := range dbs {
		wg.Go(func() {
			if err := db.Migrate(context.Background()); err != nil {
				t.Errorf("concurrent Migrate: %v", err)
			}
		})
	}
	wg.Wait()
	var applied int
	err := dbs[0].Bun().NewSelect().Table("bun_migrations").ColumnExpr("count(*)").Scan(t.Context(), &applied)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("migrations/postgres/*.up.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("migration files: %v", err)
	}
	if applied != len(files) {
		t.Errorf("%d migration records, want %d (each migration applied once)", applied, len(files))
	}
}

// changeEvents adapts a change that only writes events to
// ports.ChargeChangeFunc.
func changeEvents(fn func(*domain.Charge) ([]domain.Event, error)) ports.ChargeChangeFunc {
	return func(_ context.Context, c *domain.Charge, _ ports.ChargeTx) (ports.ChargeChange, error) {
		evs, err := fn(c)
		return ports.ChargeChange{Events: evs}, err
	}
}
