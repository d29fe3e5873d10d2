package store_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

func TestDashboardStoreSQLite(t *testing.T) {
	t.Parallel()
	runDashboardContract(t, func(t *testing.T) *store.DB { return openStore(t, testenv.SQLiteDSN(t)) })
}

func TestDashboardStorePostgres(t *testing.T) {
	t.Parallel()
	runDashboardContract(t, func(t *testing.T) *store.DB { return openStore(t, testenv.PostgresDSN(t)) })
}

// runDashboardContract is the contract of the dashboard and guard ports,
// run against both dialects.
func runDashboardContract(t *testing.T, open func(t *testing.T) *store.DB) {
	tests := []struct {
		name string
		run  func(t *testing.T, db *store.DB)
	}{
		{"ReplaceAPIKey", testReplaceAPIKey},
		{"ConcurrentRotationsHaveOneWinner", testConcurrentRotations},
		{"RequestLogs", testRequestLogs},
		{"TokenDenylist", testTokenDenylist},
		{"GuardSettingsAndBlockList", testGuardSettings},
		{"Housekeeping", testHousekeeping},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.run(t, open(t))
		})
	}
}

func audit(accountID, action string, k ports.APIKeyRecord, at time.Time) ports.AuditEntry {
	return ports.AuditEntry{ID: "aud_" + k.ID + action, AccountID: accountID, UserID: "usr_1", Action: action,
		KeyID: k.ID, KeyFingerprint: k.Fingerprint, CreatedAt: at}
}

func testReplaceAPIKey(t *testing.T, db *store.DB) {
	ctx := t.Context()
	a, _, keys := newAccount(t, db, "keys@example.com")
	b, _, _ := newAccount(t, db, "other@example.com")
	old := keys[0]
	next := newKey(t, a.ID, old.Mode, baseTime.Add(time.Minute))

	if err := db.IssueAPIKey(ctx, next, audit(a.ID, "issued", next, baseTime)); err != nil {
		t.Fatal(err)
	}
	// Another account's key: not found, nothing written.
	err := db.ReplaceAPIKey(ctx, b.ID, old.ID, baseTime, func(ports.APIKeyRecord) (*ports.APIKeyRecord, []ports.AuditEntry, error) {
		t.Fatal("fn called for another account's key")
		return nil, nil, nil
	})
	if !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("other account: %v", err)
	}
	// fn's error rolls back.
	boom := errors.New("boom")
	err = db.ReplaceAPIKey(ctx, a.ID, old.ID, baseTime, func(ports.APIKeyRecord) (*ports.APIKeyRecord, []ports.AuditEntry, error) {
		return nil, nil, boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("fn error: %v", err)
	}
	if _, _, err := db.LookupAPIKey(ctx, old.Fingerprint); err != nil {
		t.Fatalf("key revoked despite the error: %v", err)
	}
	// A failing insert (duplicate fingerprint) rolls the revocation back.
	err = db.ReplaceAPIKey(ctx, a.ID, old.ID, baseTime, func(ports.APIKeyRecord) (*ports.APIKeyRecord, []ports.AuditEntry, error) {
		dup := newKey(t, a.ID, old.Mode, baseTime)
		dup.Fingerprint = next.Fingerprint
		return &dup, nil, nil
	})
	if !errors.Is(err, ports.ErrDuplicate) {
		t.Fatalf("duplicate successor: %v", err)
	}
	if _, _, err := db.LookupAPIKey(ctx, old.Fingerprint); err != nil {
		t.Fatalf("key revoked although the successor failed: %v", err)
	}
	// Rotation: old revoked, successor and audit written.
	succ := newKey(t, a.ID, old.Mode, baseTime.Add(2*time.Minute))
	var seen ports.APIKeyRecord
	err = db.ReplaceAPIKey(ctx, a.ID, old.ID, baseTime.Add(2*time.Minute), func(o ports.APIKeyRecord) (*ports.APIKeyRecord, []ports.AuditEntry, error) {
		seen = o
		return &succ, []ports.AuditEntry{audit(a.ID, "rotated", o, baseTime.Add(2*time.Minute))}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen.ID != old.ID || seen.Fingerprint != old.Fingerprint || seen.Mode != old.Mode {
		t.Errorf("fn saw %+v", seen)
	}
	if _, _, err := db.LookupAPIKey(ctx, old.Fingerprint); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("old key after rotation: %v", err)
	}
	if _, _, err := db.LookupAPIKey(ctx, succ.Fingerprint); err != nil {
		t.Errorf("successor: %v", err)
	}
	// Already revoked.
	err = db.ReplaceAPIKey(ctx, a.ID, old.ID, baseTime, func(ports.APIKeyRecord) (*ports.APIKeyRecord, []ports.AuditEntry, error) {
		return nil, nil, nil
	})
	if !errors.Is(err, ports.ErrAPIKeyRevoked) {
		t.Errorf("revoked key: %v", err)
	}
	es, err := db.ListAuditEntries(ctx, a.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].Action != "rotated" || es[1].Action != "issued" || es[0].KeyFingerprint != old.Fingerprint ||
		!es[0].CreatedAt.Equal(micro(baseTime.Add(2*time.Minute))) {
		t.Errorf("audit entries %+v", es)
	}
	if es, _ := db.ListAuditEntries(ctx, b.ID, 10); len(es) != 0 {
		t.Errorf("B sees %d audit entries", len(es))
	}
}

func testConcurrentRotations(t *testing.T, db *store.DB) {
	a, _, keys := newAccount(t, db, "race@example.com")
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for range 4 {
		wg.Go(func() {
			succ := newKey(t, a.ID, keys[0].Mode, baseTime)
			err := db.ReplaceAPIKey(t.Context(), a.ID, keys[0].ID, baseTime, func(ports.APIKeyRecord) (*ports.APIKeyRecord, []ports.AuditEntry, error) {
				return &succ, nil, nil
			})
			if err == nil {
				mu.Lock()
				wins++
				mu.Unlock()
			} else if !errors.Is(err, ports.ErrAPIKeyRevoked) {
				t.Errorf("rotation: %v", err)
			}
		})
	}
	wg.Wait()
	ks, err := db.ListAPIKeys(t.Context(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if wins != 1 || len(ks) != 3 {
		t.Errorf("%d rotations won, %d keys; want 1 and 3", wins, len(ks))
	}
}

func testRequestLogs(t *testing.T, db *store.DB) {
	ctx := t.Context()
	var entries []ports.RequestLogEntry
	for i := range 5 {
		fp := "fp-one"
		if i%2 == 1 {
			fp = "fp-two"
		}
		entries = append(entries, ports.RequestLogEntry{RequestID: "req_" + string(rune('a'+i)), AccountID: "acct_a", Mode: "test",
			KeyFingerprint: fp, Method: "GET", Path: "/v1/charges/{id}", Status: 404, Duration: 1500 * time.Microsecond,
			CreatedAt: baseTime.Add(time.Duration(i) * time.Second)})
	}
	entries = append(entries, ports.RequestLogEntry{RequestID: "req_z", AccountID: "acct_b", KeyFingerprint: "fp-one",
		Method: "POST", Path: "/v1/charges", Status: 201, CreatedAt: baseTime})
	if err := db.InsertRequestLogs(ctx, entries); err != nil {
		t.Fatal(err)
	}
	got, err := db.ListRequestLogs(ctx, ports.RequestLogQuery{AccountID: "acct_a", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || got[0].RequestID != "req_e" || got[0].Duration != 1500*time.Microsecond || got[0].Path != "/v1/charges/{id}" {
		t.Fatalf("list %+v", got)
	}
	// Every field comes back as written (on Postgres the batch goes by COPY).
	if g, w := got[0], entries[4]; g.AccountID != w.AccountID || g.Mode != w.Mode || g.KeyFingerprint != w.KeyFingerprint ||
		g.Method != w.Method || g.Status != w.Status || !g.CreatedAt.Equal(w.CreatedAt.Truncate(time.Microsecond)) {
		t.Fatalf("entry read back %+v, want %+v", g, w)
	}
	got, _ = db.ListRequestLogs(ctx, ports.RequestLogQuery{AccountID: "acct_a", KeyFingerprint: "fp-two", Limit: 1})
	if len(got) != 1 || got[0].RequestID != "req_d" {
		t.Fatalf("filtered %+v", got)
	}
}

func testTokenDenylist(t *testing.T, db *store.DB) {
	ctx := t.Context()
	if denied, err := db.TokenDenied(ctx, "ses_1"); err != nil || denied {
		t.Fatalf("fresh token: %v %v", denied, err)
	}
	for range 2 {
		if err := db.DenyToken(ctx, "ses_1", baseTime.Add(12*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if denied, err := db.TokenDenied(ctx, "ses_1"); err != nil || !denied {
		t.Fatalf("denied token: %v %v", denied, err)
	}
	// By id, or by the user's cutoff: tokens issued at or before it.
	issued := baseTime.Add(time.Hour)
	for _, tc := range []struct {
		jti, user string
		at        time.Time
		want      bool
	}{
		{"ses_1", "usr_1", issued, true},
		{"ses_2", "usr_1", issued, false},
	} {
		if denied, err := db.SessionDenied(ctx, tc.jti, tc.user, tc.at); err != nil || denied != tc.want {
			t.Fatalf("%s before any cutoff: %v %v, want %v", tc.jti, denied, err, tc.want)
		}
	}
	if err := db.DenyUserTokens(ctx, "usr_1", issued); err != nil {
		t.Fatal(err)
	}
	if err := db.DenyUserTokens(ctx, "usr_1", baseTime); err != nil { // never moves back
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user string
		at   time.Time
		want bool
	}{
		{"usr_1", issued.Add(-time.Second), true},
		{"usr_1", issued, true},
		{"usr_1", issued.Add(time.Second), false},
		{"usr_2", issued.Add(-time.Second), false},
	} {
		if denied, err := db.SessionDenied(ctx, "ses_9", tc.user, tc.at); err != nil || denied != tc.want {
			t.Errorf("%s issued at %v after the cutoff: %v %v, want %v", tc.user, tc.at, denied, err, tc.want)
		}
	}
}

func testGuardSettings(t *testing.T, db *store.DB) {
	ctx := t.Context()
	a, _, _ := newAccount(t, db, "guard@example.com")
	if s, err := db.GetAccountSettings(ctx, a.ID); err != nil || s != (ports.AccountSettings{}) {
		t.Fatalf("no settings: %+v %v", s, err)
	}
	// The cashout restriction keeps all three states: on, off, and left
	// to the default (which differs by mode, so it is not stored as
	// either).
	for _, want := range []ports.AccountSettings{{RateLimitPerSecond: 5, RateLimitBurst: 10, VelocityPerHour: 3, AmountLimit: 123},
		{VelocityPerHour: 7, CashoutPayerOnly: ports.ToggleOff}, {CashoutPayerOnly: ports.ToggleOn}, {VelocityPerHour: 7}} {
		if err := db.PutAccountSettings(ctx, a.ID, want, baseTime); err != nil {
			t.Fatal(err)
		}
		if got, err := db.GetAccountSettings(ctx, a.ID); err != nil || got != want {
			t.Fatalf("settings %+v %v, want %+v", got, err, want)
		}
	}
	if err := db.PutAccountSettings(ctx, "acct_missing", ports.AccountSettings{}, baseTime); err == nil {
		t.Error("settings for an unknown account")
	}
	for range 2 {
		if err := db.BlockPayer(ctx, a.ID, "52998224725", baseTime); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := db.PayerBlocked(ctx, a.ID, "52998224725"); err != nil || !ok {
		t.Fatalf("blocked: %v %v", ok, err)
	}
	if ok, _ := db.PayerBlocked(ctx, "acct_other", "52998224725"); ok {
		t.Error("blocked in another account")
	}
	if err := db.UnblockPayer(ctx, a.ID, "52998224725"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := db.PayerBlocked(ctx, a.ID, "52998224725"); ok {
		t.Error("still blocked")
	}
}

func testHousekeeping(t *testing.T, db *store.DB) {
	ctx := t.Context()
	for i, jti := range []string{"ses_old1", "ses_old2", "ses_new"} {
		exp := baseTime.Add(-time.Hour)
		if i == 2 {
			exp = baseTime.Add(time.Hour)
		}
		if err := db.DenyToken(ctx, jti, exp); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := db.DeleteExpiredTokens(ctx, baseTime, 1); err != nil || n != 1 {
		t.Fatalf("first batch: %d %v", n, err)
	}
	if n, err := db.DeleteExpiredTokens(ctx, baseTime, 10); err != nil || n != 1 {
		t.Fatalf("second batch: %d %v", n, err)
	}
	if denied, _ := db.TokenDenied(ctx, "ses_new"); !denied {
		t.Fatal("an unexpired token left the denylist")
	}
	old := baseTime.Add(-31 * 24 * time.Hour)
	err := db.InsertRequestLogs(ctx, []ports.RequestLogEntry{
		{RequestID: "req_old1", AccountID: "acct_a", Method: "GET", Path: "/v1/charges", Status: 200, CreatedAt: old},
		{RequestID: "req_new", AccountID: "acct_a", Method: "GET", Path: "/v1/charges", Status: 200, CreatedAt: baseTime},
		{RequestID: "req_old2", AccountID: "acct_b", Method: "GET", Path: "/v1/charges", Status: 200, CreatedAt: old},
		{RequestID: "req_old3", AccountID: "acct_a", Method: "GET", Path: "/v1/charges", Status: 200, CreatedAt: old},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The table has no key: rows go by their physical address, at most
	// limit at a time.
	if n, err := db.DeleteRequestLogsBefore(ctx, baseTime.Add(-30*24*time.Hour), 2); err != nil || n != 2 {
		t.Fatalf("request logs, first batch: %d %v, want the limit 2", n, err)
	}
	if n, err := db.DeleteRequestLogsBefore(ctx, baseTime.Add(-30*24*time.Hour), 10); err != nil || n != 1 {
		t.Fatalf("request logs, second batch: %d %v, want the last old one", n, err)
	}
	got, _ := db.ListRequestLogs(ctx, ports.RequestLogQuery{AccountID: "acct_a", Limit: 10})
	if len(got) != 1 || got[0].RequestID != "req_new" {
		t.Fatalf("left %+v", got)
	}
}
