package store_test

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

func TestSecurityStoreSQLite(t *testing.T) {
	t.Parallel()
	runSecurityContract(t, func(t *testing.T) *store.DB { return openStore(t, testenv.SQLiteDSN(t)) })
}

func TestSecurityStorePostgres(t *testing.T) {
	t.Parallel()
	runSecurityContract(t, func(t *testing.T) *store.DB { return openStore(t, testenv.PostgresDSN(t)) })
}

// runSecurityContract is the contract of SessionStore and
// UserSecurityStore, run against both dialects.
func runSecurityContract(t *testing.T, open func(t *testing.T) *store.DB) {
	for name, run := range map[string]func(t *testing.T, db *store.DB){
		"Sessions":           testSessions,
		"EndOtherSessions":   testEndOtherSessions,
		"SecondFactor":       testSecondFactor,
		"SealedSecondFactor": testSealedSecondFactor,
		"SetPassword":        testSetPassword,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			run(t, open(t))
		})
	}
}

func session(jti, user string, at time.Time) ports.SessionRecord {
	at = at.Truncate(time.Second)
	return ports.SessionRecord{TokenID: jti, UserID: user, CreatedAt: at, ExpiresAt: at.Add(12 * time.Hour), LastSeenAt: at,
		UserAgent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0", Client: "192.0.2.x"}
}

func testSessions(t *testing.T, db *store.DB) {
	ctx := t.Context()
	a, b := session("ses_a", "usr_1", baseTime), session("ses_b", "usr_1", baseTime.Add(time.Minute))
	for _, s := range []ports.SessionRecord{a, b, session("ses_other", "usr_2", baseTime), session("ses_gone", "usr_1", baseTime.Add(-13*time.Hour))} {
		if err := db.RecordSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	now := baseTime.Add(2 * time.Minute)
	got, err := db.ListSessions(ctx, "usr_1", now, 10)
	if err != nil || len(got) != 2 || got[0] != b || got[1] != a {
		t.Fatalf("list: %+v %v", got, err)
	}
	if s, err := db.GetSession(ctx, "usr_1", "ses_a"); err != nil || s != a {
		t.Fatalf("get: %+v %v", s, err)
	}
	if _, err := db.GetSession(ctx, "usr_2", "ses_a"); !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("another user's session: %v", err)
	}
	// One read: denial and the row.
	c, err := db.CheckSession(ctx, "ses_a", "usr_1", a.CreatedAt)
	if err != nil || c.Denied || !c.Recorded || !c.LastSeenAt.Equal(a.LastSeenAt) {
		t.Fatalf("check: %+v %v", c, err)
	}
	if c, err := db.CheckSession(ctx, "ses_legacy", "usr_1", a.CreatedAt); err != nil || c.Denied || c.Recorded {
		t.Fatalf("check of a session without a row: %+v %v", c, err)
	}
	// Touch moves last seen forward only.
	if err := db.TouchSession(ctx, "ses_a", now); err != nil {
		t.Fatal(err)
	}
	if err := db.TouchSession(ctx, "ses_a", baseTime); err != nil {
		t.Fatal(err)
	}
	if c, _ := db.CheckSession(ctx, "ses_a", "usr_1", a.CreatedAt); !c.LastSeenAt.Equal(now.Truncate(time.Microsecond)) {
		t.Fatalf("last seen %v, want %v", c.LastSeenAt, now)
	}
	// A denied session leaves the list and checks as denied.
	if err := db.DenyToken(ctx, "ses_b", b.ExpiresAt); err != nil {
		t.Fatal(err)
	}
	if c, _ := db.CheckSession(ctx, "ses_b", "usr_1", b.CreatedAt); !c.Denied {
		t.Fatal("a denied session checks as live")
	}
	if got, _ := db.ListSessions(ctx, "usr_1", now, 10); len(got) != 1 || got[0].TokenID != "ses_a" {
		t.Fatalf("after denying ses_b: %+v", got)
	}
	// So does one at or before the user's cutoff.
	if err := db.DenyUserTokens(ctx, "usr_1", a.CreatedAt); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.ListSessions(ctx, "usr_1", now, 10); len(got) != 0 {
		t.Fatalf("after the cutoff: %+v", got)
	}
	// Housekeeping removes expired rows.
	if n, err := db.DeleteExpiredTokens(ctx, baseTime.Add(-30*time.Minute), 10); err != nil || n != 1 {
		t.Fatalf("housekeeping: %d %v", n, err)
	}
	if _, err := db.GetSession(ctx, "usr_1", "ses_gone"); !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("expired row: %v", err)
	}
}

func testEndOtherSessions(t *testing.T, db *store.DB) {
	ctx := t.Context()
	older, keep, newer := session("ses_older", "usr_1", baseTime), session("ses_keep", "usr_1", baseTime.Add(time.Minute)),
		session("ses_newer", "usr_1", baseTime.Add(2*time.Minute))
	same := session("ses_same", "usr_1", keep.CreatedAt) // issued in keep's second
	for _, s := range []ports.SessionRecord{older, keep, newer, same, session("ses_x", "usr_2", baseTime)} {
		if err := db.RecordSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	now := baseTime.Add(3 * time.Minute)
	n, err := db.EndOtherSessions(ctx, "usr_1", "ses_keep", keep.CreatedAt, now)
	if err != nil || n != 3 {
		t.Fatalf("ended %d %v, want 3", n, err)
	}
	for jti, want := range map[string]bool{"ses_older": true, "ses_keep": false, "ses_newer": true, "ses_same": true} {
		s, _ := db.GetSession(ctx, "usr_1", jti)
		if c, err := db.CheckSession(ctx, jti, "usr_1", s.CreatedAt); err != nil || c.Denied != want {
			t.Errorf("%s denied %v %v, want %v", jti, c.Denied, err, want)
		}
	}
	// A token issued before keep and never recorded is ended by the cutoff.
	if c, _ := db.CheckSession(ctx, "ses_unrecorded", "usr_1", keep.CreatedAt.Add(-time.Second)); !c.Denied {
		t.Error("an unrecorded older token survived")
	}
	if c, _ := db.CheckSession(ctx, "ses_x", "usr_2", baseTime); c.Denied {
		t.Error("another user's session was ended")
	}
	if got, _ := db.ListSessions(ctx, "usr_1", now, 10); len(got) != 1 || got[0].TokenID != "ses_keep" {
		t.Fatalf("left: %+v", got)
	}
	if n, err := db.EndOtherSessions(ctx, "usr_1", "ses_keep", keep.CreatedAt, now); err != nil || n != 0 {
		t.Fatalf("again: %d %v", n, err)
	}
}

func testSecondFactor(t *testing.T, db *store.DB) {
	ctx := t.Context()
	_, u, _ := newAccount(t, db, "totp-"+newRawID(t)+"@example.com")
	if _, _, err := db.GetUserSecurity(ctx, "usr_nobody"); !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("unknown user: %v", err)
	}
	got, f, err := db.GetUserSecurity(ctx, u.ID)
	if err != nil || got.Email != u.Email || got.SecondFactor || f.Enabled() || f.PendingSecret != "" {
		t.Fatalf("fresh user: %+v %+v %v", got, f, err)
	}
	if err := db.EnableTOTP(ctx, u.ID, "JBSWY3DPEHPK3PXP", 1, nil, baseTime); !errors.Is(err, ports.ErrTOTPNotPending) {
		t.Fatalf("enable without a setup: %v", err)
	}
	for _, s := range []string{"AAAAAAAAAAAAAAAA", "JBSWY3DPEHPK3PXP"} { // a second setup replaces the first
		if err := db.SetPendingTOTP(ctx, u.ID, s, baseTime); err != nil {
			t.Fatal(err)
		}
	}
	if _, f, _ := db.GetUserSecurity(ctx, u.ID); f.PendingSecret != "JBSWY3DPEHPK3PXP" || f.Enabled() {
		t.Fatalf("pending: %+v", f)
	}
	if ok, err := db.UseTOTPStep(ctx, u.ID, 5); err != nil || ok {
		t.Fatalf("a step used before TOTP is on: %v %v", ok, err)
	}
	if err := db.EnableTOTP(ctx, u.ID, "AAAAAAAAAAAAAAAA", 1, nil, baseTime); !errors.Is(err, ports.ErrTOTPNotPending) {
		t.Fatalf("enable with the replaced secret: %v", err)
	}
	hashes := []string{"h1", "h2", "h3"}
	// Concurrent confirmations of one setup: one enables it.
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = db.EnableTOTP(ctx, u.ID, "JBSWY3DPEHPK3PXP", 100, hashes, baseTime) })
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, ports.ErrTOTPNotPending):
			t.Fatalf("concurrent enable: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d confirmations enabled it", won)
	}
	got, f, err = db.GetUserSecurity(ctx, u.ID)
	if err != nil || !got.SecondFactor || f.Secret != "JBSWY3DPEHPK3PXP" || f.PendingSecret != "" || f.LastStep != 100 ||
		f.RecoveryLeft != 3 || f.EnabledAt == nil {
		t.Fatalf("enabled: %+v %+v %v", got, f, err)
	}
	if byEmail, err := db.GetUserByEmail(ctx, strings.ToUpper(u.Email)); err != nil || !byEmail.SecondFactor {
		t.Fatalf("by e-mail: %+v %v", byEmail, err)
	}
	// Steps: only later ones, each once, under concurrency too.
	for step, want := range map[int64]bool{100: false, 99: false} {
		if ok, err := db.UseTOTPStep(ctx, u.ID, step); err != nil || ok != want {
			t.Errorf("step %d: %v %v", step, ok, err)
		}
	}
	var accepted atomic.Int32
	for range 4 {
		wg.Go(func() {
			ok, err := db.UseTOTPStep(ctx, u.ID, 101)
			if err != nil {
				t.Error(err)
			}
			if ok {
				accepted.Add(1)
			}
		})
	}
	wg.Wait()
	if _, f, _ := db.GetUserSecurity(ctx, u.ID); f.LastStep != 101 || accepted.Load() != 1 {
		t.Fatalf("last step %d, step 101 accepted %d times", f.LastStep, accepted.Load())
	}
	// Recovery codes: each once.
	if ok, err := db.UseRecoveryCode(ctx, u.ID, "h2", baseTime); err != nil || !ok {
		t.Fatalf("recovery code: %v %v", ok, err)
	}
	for _, h := range []string{"h2", "nope"} {
		if ok, err := db.UseRecoveryCode(ctx, u.ID, h, baseTime); err != nil || ok {
			t.Fatalf("recovery code %s again: %v %v", h, ok, err)
		}
	}
	if _, f, _ := db.GetUserSecurity(ctx, u.ID); f.RecoveryLeft != 2 {
		t.Fatalf("left %d", f.RecoveryLeft)
	}
	if err := db.DisableTOTP(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	got, f, err = db.GetUserSecurity(ctx, u.ID)
	if err != nil || got.SecondFactor || f.Enabled() || f.RecoveryLeft != 0 {
		t.Fatalf("disabled: %+v %+v %v", got, f, err)
	}
	if ok, _ := db.UseRecoveryCode(ctx, u.ID, "h1", baseTime); ok {
		t.Fatal("a recovery code outlived TOTP")
	}
}

// With a master key the TOTP secrets are sealed at rest and read back.
func testSealedSecondFactor(t *testing.T, db *store.DB) {
	ctx := t.Context()
	if err := db.SealSecretsWith([]byte(strings.Repeat("k", 32))); err != nil {
		t.Fatal(err)
	}
	_, u, _ := newAccount(t, db, "sealed-"+newRawID(t)+"@example.com")
	if err := db.SetPendingTOTP(ctx, u.ID, "JBSWY3DPEHPK3PXP", baseTime); err != nil {
		t.Fatal(err)
	}
	var raw string
	if err := db.Bun().NewRaw("SELECT pending_secret FROM user_second_factors WHERE user_id = ?", u.ID).Scan(ctx, &raw); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(raw, "sealed:v1:") || strings.Contains(raw, "JBSWY3DPEHPK3PXP") {
		t.Fatalf("stored %q", raw)
	}
	if err := db.EnableTOTP(ctx, u.ID, "JBSWY3DPEHPK3PXP", 1, []string{"h"}, baseTime); err != nil {
		t.Fatal(err)
	}
	if _, f, err := db.GetUserSecurity(ctx, u.ID); err != nil || f.Secret != "JBSWY3DPEHPK3PXP" {
		t.Fatalf("sealed secret read back: %+v %v", f, err)
	}
}

func testSetPassword(t *testing.T, db *store.DB) {
	ctx := t.Context()
	_, u, _ := newAccount(t, db, "Reset-"+newRawID(t)+"@Example.com")
	got, err := db.SetPassword(ctx, strings.ToLower(u.Email), "new-hash")
	if err != nil || got.ID != u.ID || got.PasswordHash != "new-hash" {
		t.Fatalf("set: %+v %v", got, err)
	}
	if byEmail, _ := db.GetUserByEmail(ctx, u.Email); byEmail.PasswordHash != "new-hash" {
		t.Fatalf("read back %q", byEmail.PasswordHash)
	}
	if _, err := db.SetPassword(ctx, "nobody@example.com", "x"); !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("unknown e-mail: %v", err)
	}
}
