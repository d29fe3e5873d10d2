package app_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

// guardHarness is a charge service whose fraud guard reads settings,
// the block list and counts from moq mocks.
type guardHarness struct {
	*harness
	guards *mocks.GuardStoreMock
	audit  *mocks.AuditLogMock
}

func newGuardHarness(t *testing.T, settings ports.AccountSettings, blocked bool, recent int) *guardHarness {
	t.Helper()
	g := &guardHarness{}
	g.guards = &mocks.GuardStoreMock{
		GetAccountSettingsFunc: func(context.Context, string) (ports.AccountSettings, error) { return settings, nil },
		PayerBlockedFunc:       func(context.Context, string, string) (bool, error) { return blocked, nil },
		AdmitPayerChargeFunc: func(_ context.Context, a ports.PayerAdmission) (bool, error) {
			return recent < a.Max, nil
		},
	}
	g.audit = &mocks.AuditLogMock{InsertAuditEntryFunc: func(context.Context, ports.AuditEntry) error { return nil }}
	clock := &mocks.ClockMock{NowFunc: func() time.Time { return t0 }}
	ids := &mocks.IDGeneratorMock{NewIDFunc: func() (string, error) { return "raw0000000000000000000001", nil }}
	gs := app.NewGuardSettings(g.guards, clock, app.GuardDefaults{})
	g.harness = newGuardedHarness(t, app.NewFraudGuard(gs, g.guards, g.audit, clock, ids))
	return g
}

// A refusal happens before any acquirer call and writes nothing but the
// audit entry: no charge, no idempotency record, and the claim on the key
// is released so a later retry may run.
func TestFraudGuardRefusesBeforeTheAcquirer(t *testing.T) {
	t.Parallel()
	doc := "529.982.247-25"
	cases := []struct {
		name     string
		settings ports.AccountSettings
		blocked  bool
		recent   int
		amount   int64
		code     string
	}{
		{"amount over the default cap", ports.AccountSettings{}, false, 0, 10_000_001, app.FraudAmountLimitExceeded},
		{"amount over the account cap", ports.AccountSettings{AmountLimit: 1000}, false, 0, 1001, app.FraudAmountLimitExceeded},
		{"blocked payer", ports.AccountSettings{}, true, 0, 100, app.FraudPayerBlocked},
		{"velocity at the default", ports.AccountSettings{}, false, 20, 100, app.FraudVelocityExceeded},
		{"velocity at the account's", ports.AccountSettings{VelocityPerHour: 3}, false, 3, 100, app.FraudVelocityExceeded},
		{"allowed", ports.AccountSettings{VelocityPerHour: 3}, false, 2, 10_000_000, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newGuardHarness(t, tc.settings, tc.blocked, tc.recent)
			c := caller
			c.KeyFingerprint = "fp-key"
			_, err := g.svc.Create(context.Background(), c, app.CreateChargeInput{
				Amount: tc.amount, Methods: []domain.Method{domain.MethodPix}, Customer: domain.Customer{Name: "Ana", Document: doc},
			}, app.Idempotency{Key: "guard-key-1", Fingerprint: "fp"}, render)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("allowed charge refused: %v", err)
				}
				if len(g.acquirer.CreatePixChargeCalls()) != 1 || len(g.audit.InsertAuditEntryCalls()) != 0 {
					t.Fatal("allowed charge: want one acquirer call and no audit entry")
				}
				return
			}
			var fe *app.FraudError
			if !errors.As(err, &fe) || fe.Code != tc.code {
				t.Fatalf("err %v, want %s", err, tc.code)
			}
			if n := len(g.acquirer.CreatePixChargeCalls()); n != 0 {
				t.Errorf("%d acquirer calls before the refusal", n)
			}
			if n := len(g.store.CreateChargeCalls()); n != 0 {
				t.Errorf("%d charges written", n)
			}
			if n := len(g.cache.CompleteCalls()) + len(g.cache.CompleteInRecordCalls()); n != 0 {
				t.Errorf("refusal cached as the key's answer")
			}
			calls := g.audit.InsertAuditEntryCalls()
			if len(calls) != 1 {
				t.Fatalf("%d audit entries, want 1", len(calls))
			}
			e := calls[0].E
			if e.Action != app.AuditChargeRefused || e.Code != tc.code || e.KeyFingerprint != "fp-key" || e.AccountID != caller.Account.ID {
				t.Errorf("audit entry %+v", e)
			}
			if tc.code == app.FraudVelocityExceeded {
				cc := g.guards.AdmitPayerChargeCalls()
				if len(cc) != 1 || cc[0].A.Payer != "52998224725" || !cc[0].A.Since.Equal(t0.Add(-time.Hour)) || cc[0].A.Scope != caller.Scope() ||
					cc[0].A.Max <= 0 || cc[0].A.Key == "" {
					t.Errorf("velocity asked %+v", cc)
				}
			}
		})
	}
}

// The cashout restriction is on in live mode and off in test mode until an
// operator sets it, and then holds in both modes; a value that is none of
// on, off or the default is refused.
func TestCashoutPayerOnlySetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		set        ports.Toggle
		live, test bool
	}{{ports.ToggleDefault, true, false}, {ports.ToggleOn, true, true}, {ports.ToggleOff, false, false}} {
		store := &mocks.GuardStoreMock{GetAccountSettingsFunc: func(context.Context, string) (ports.AccountSettings, error) {
			return ports.AccountSettings{CashoutPayerOnly: tc.set}, nil
		}}
		gs := app.NewGuardSettings(store, &mocks.ClockMock{NowFunc: func() time.Time { return t0 }}, app.GuardDefaults{})
		live, err := gs.CashoutPayerOnly(context.Background(), "acct_1", domain.ModeLive)
		if err != nil {
			t.Fatal(err)
		}
		test, err := gs.CashoutPayerOnly(context.Background(), "acct_1", domain.ModeTest)
		if err != nil {
			t.Fatal(err)
		}
		if live != tc.live || test != tc.test {
			t.Errorf("setting %d: live %v test %v, want %v %v", tc.set, live, test, tc.live, tc.test)
		}
	}
	store := &mocks.GuardStoreMock{}
	gs := app.NewGuardSettings(store, &mocks.ClockMock{NowFunc: func() time.Time { return t0 }}, app.GuardDefaults{})
	if err := gs.Set(context.Background(), "acct_1", ports.AccountSettings{CashoutPayerOnly: 7}); err == nil || len(store.PutAccountSettingsCalls()) != 0 {
		t.Errorf("an unknown toggle: %v, %d writes", err, len(store.PutAccountSettingsCalls()))
	}
}
