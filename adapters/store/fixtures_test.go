package store_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

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

// changeEvents adapts a change that only writes events to
// ports.ChargeChangeFunc.
func changeEvents(fn func(*domain.Charge) ([]domain.Event, error)) ports.ChargeChangeFunc {
	return func(_ context.Context, c *domain.Charge, _ ports.ChargeTx) (ports.ChargeChange, error) {
		evs, err := fn(c)
		return ports.ChargeChange{Events: evs}, err
	}
}
