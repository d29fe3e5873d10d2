package app_test

import (
	"context"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

// A login with TOTP: the password alone yields only a challenge, which is
// no session; the second step takes a code once; wrong codes count on
// the login's counters, which a right password alone does not clear.
func TestLoginWithTOTP(t *testing.T) {
	t.Parallel()
	h := newSecurityHarness(t, app.SessionConfig{MaxFailures: 4})
	ctx := context.Background()
	_, u := h.login(t, "198.51.100.7", "")
	secret, _ := h.enable(t, u)
	const client = "203.0.113.9"
	first := func() *app.SecondFactorRequired {
		t.Helper()
		_, err := h.sessions.SignIn(ctx, app.LoginRequest{Email: h.user.Email, Password: securityPassword, Client: client})
		var second *app.SecondFactorRequired
		if !errors.As(err, &second) || !errors.Is(err, app.ErrSecondFactorRequired) || !second.ExpiresAt.Equal(t0Trunc(h).Add(app.ChallengeTTL)) {
			t.Fatalf("password only: %v", err)
		}
		return second
	}
	ch := first()
	if _, err := h.sessions.Verify(ctx, ch.Challenge); !errors.Is(err, app.ErrInvalidSession) {
		t.Fatalf("the challenge as a session: %v", err)
	}
	if _, err := h.sessions.CompleteSignIn(ctx, ch.Challenge, "000000", client, ""); !errors.Is(err, app.ErrInvalidSecondFactor) {
		t.Fatalf("a wrong code: %v", err)
	}
	// Three attempts so far (password, wrong code, and now the password
	// again, which clears nothing): the fifth is refused, right code or not.
	ch = first()
	if _, err := h.sessions.CompleteSignIn(ctx, ch.Challenge, "111111", client, ""); !errors.Is(err, app.ErrInvalidSecondFactor) {
		t.Fatalf("another wrong code: %v", err)
	}
	var te *app.ThrottledError
	if _, err := h.sessions.CompleteSignIn(ctx, ch.Challenge, h.code(t, secret, 0), client, ""); !errors.As(err, &te) {
		t.Fatalf("the right code past the limit: %v", err)
	}
	h.clock.Advance(15 * time.Minute)
	ch = first()
	s, err := h.sessions.CompleteSignIn(ctx, ch.Challenge, h.code(t, secret, 0), client, "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0")
	if err != nil {
		t.Fatalf("the right code: %v", err)
	}
	if _, err := h.sessions.Verify(ctx, s.Token); err != nil {
		t.Fatalf("the session: %v", err)
	}
	// The challenge is used up, and the code's step with it.
	h.nextStep()
	if _, err := h.sessions.CompleteSignIn(ctx, ch.Challenge, h.code(t, secret, 0), client, ""); !errors.Is(err, app.ErrLoginChallenge) {
		t.Fatalf("the challenge again: %v", err)
	}
	// One step through the API: the code with the password.
	if _, err := h.sessions.SignIn(ctx, app.LoginRequest{Email: h.user.Email, Password: securityPassword, Code: h.code(t, secret, 0),
		Client: client}); err != nil {
		t.Fatalf("password and code: %v", err)
	}
	if _, err := h.sessions.SignIn(ctx, app.LoginRequest{Email: h.user.Email, Password: securityPassword, Code: h.code(t, secret, 0),
		Client: client}); !errors.Is(err, app.ErrInvalidSecondFactor) {
		t.Fatalf("the same code again: %v", err)
	}
	if _, err := h.sessions.SignIn(ctx, app.LoginRequest{Email: h.user.Email, Password: "wrong", Code: h.code(t, secret, 1),
		Client: client}); !errors.Is(err, app.ErrInvalidCredentials) {
		t.Fatalf("a wrong password with a right code: %v", err)
	}
	// A challenge expires, and dies with the user's sessions.
	ch = first()
	h.clock.Advance(app.ChallengeTTL + time.Second)
	if _, err := h.sessions.CompleteSignIn(ctx, ch.Challenge, h.code(t, secret, 0), client, ""); !errors.Is(err, app.ErrLoginChallenge) {
		t.Fatalf("an expired challenge: %v", err)
	}
	ch = first()
	h.clock.Advance(time.Second)
	if _, err := h.sessions.EndOtherSessions(ctx, app.DashboardUser{UserID: h.user.ID, TokenID: "ses_x", IssuedAt: h.clock.Now().Truncate(time.Second)}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.sessions.CompleteSignIn(ctx, ch.Challenge, h.code(t, secret, 0), client, ""); !errors.Is(err, app.ErrLoginChallenge) {
		t.Fatalf("a challenge issued before the user's cutoff: %v", err)
	}
	if _, err := h.sessions.CompleteSignIn(ctx, "forged", "123456", client, ""); !errors.Is(err, app.ErrLoginChallenge) {
		t.Fatalf("a forged challenge: %v", err)
	}
}

func t0Trunc(h *securityHarness) time.Time { return h.clock.Now().Truncate(time.Second) }

// Sessions are listed with the asking one marked, the address masked and
// the agent kept; one can be ended, and all others at once; last seen
// moves with use, to the minute.
func TestSessionsListedAndEnded(t *testing.T) {
	t.Parallel()
	h := newSecurityHarness(t, app.SessionConfig{})
	ctx := context.Background()
	old, _ := h.login(t, "192.0.2.77", "curl/8.5.0")
	h.clock.Advance(time.Minute)
	phone, _ := h.login(t, "2001:db8:1234:5678::1", "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) Safari/605.1")
	h.clock.Advance(time.Minute)
	_, me := h.login(t, "::ffff:198.51.100.23", "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0\x00\n")
	list, err := h.sessions.ListSessions(ctx, me)
	if err != nil || len(list) != 3 {
		t.Fatalf("list %+v %v", list, err)
	}
	for i, want := range []struct {
		client, agent string
		current       bool
	}{
		{"198.51.100.x", "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0", true},
		{"2001:db8:1234::/48", "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) Safari/605.1", false},
		{"192.0.2.x", "curl/8.5.0", false},
	} {
		if got := list[i]; got.Client != want.client || got.UserAgent != want.agent || got.Current != want.current {
			t.Errorf("session %d: %+v, want %+v", i, got, want)
		}
	}
	// Last seen: written when a minute stale.
	h.clock.Advance(30 * time.Second)
	if _, err := h.sessions.Verify(ctx, phone.Token); err != nil {
		t.Fatal(err)
	}
	list, _ = h.sessions.ListSessions(ctx, me)
	if !list[1].LastSeenAt.Equal(h.clock.Now()) {
		t.Errorf("phone last seen %v, want %v", list[1].LastSeenAt, h.clock.Now())
	}
	// Another user's session or a challenge's id is not found.
	if err := h.sessions.RevokeSession(ctx, app.DashboardUser{UserID: "usr_2"}, list[1].TokenID); err == nil {
		t.Error("another user ended the session")
	}
	if err := h.sessions.RevokeSession(ctx, me, list[1].TokenID); err != nil {
		t.Fatal(err)
	}
	if _, err := h.sessions.Verify(ctx, phone.Token); !errors.Is(err, app.ErrInvalidSession) {
		t.Fatalf("the ended session: %v", err)
	}
	if n, err := h.sessions.EndOtherSessions(ctx, me); err != nil || n != 1 {
		t.Fatalf("end others: %d %v", n, err)
	}
	if _, err := h.sessions.Verify(ctx, old.Token); !errors.Is(err, app.ErrInvalidSession) {
		t.Error("an older session survived")
	}
	if list, _ := h.sessions.ListSessions(ctx, me); len(list) != 1 || !list[0].Current {
		t.Fatalf("left %+v", list)
	}
	if _, err := h.sessions.Verify(ctx, "x"); !errors.Is(err, app.ErrInvalidSession) {
		t.Fatal(err)
	}
}

// The operator's reset: a new password, TOTP off, every session ended.
func TestLoginAdminReset(t *testing.T) {
	t.Parallel()
	h := newSecurityHarness(t, app.SessionConfig{})
	ctx := context.Background()
	s, u := h.login(t, "192.0.2.1", "")
	h.enable(t, u)
	admin := app.NewLoginAdmin(h.store, h.store, hasherOf(), h.store, testClock(h))
	if _, err := admin.Reset(ctx, h.user.Email, "", false); err == nil {
		t.Fatal("a reset that asks nothing")
	}
	if _, err := admin.Reset(ctx, h.user.Email, "short", false); err == nil {
		t.Fatal("a short password")
	}
	if _, err := admin.Reset(ctx, "nobody@example.com", "another long password", false); err == nil {
		t.Fatal("an unknown e-mail")
	}
	out, err := admin.Reset(ctx, "ANA@example.com", "another long password", true)
	if err != nil || out.UserID != h.user.ID || !out.PasswordChanged || !out.TOTPDisabled || !out.SessionsEnded {
		t.Fatalf("reset %+v %v", out, err)
	}
	if _, err := h.sessions.Verify(ctx, s.Token); !errors.Is(err, app.ErrInvalidSession) {
		t.Fatalf("the old session: %v", err)
	}
	h.clock.Advance(time.Second)
	if _, err := h.sessions.SignIn(ctx, app.LoginRequest{Email: h.user.Email, Password: securityPassword, Client: "192.0.2.1"}); !errors.Is(err, app.ErrInvalidCredentials) {
		t.Fatalf("the old password: %v", err)
	}
	if _, err := h.sessions.SignIn(ctx, app.LoginRequest{Email: h.user.Email, Password: "another long password", Client: "192.0.2.1"}); err != nil {
		t.Fatalf("the new password, no code: %v", err)
	}
}

// A live key asks a user with TOTP for a fresh code, on issue and on
// rotation; test keys and users without TOTP do not.
func TestLiveKeysNeedAFreshCode(t *testing.T) {
	t.Parallel()
	h := newSecurityHarness(t, app.SessionConfig{MaxFailures: 100})
	ctx := context.Background()
	var keys []ports.APIKeyRecord
	admin := &mocks.KeyAdminMock{
		IssueAPIKeyFunc: func(_ context.Context, k ports.APIKeyRecord, _ ports.AuditEntry) error {
			keys = append(keys, k)
			return nil
		},
		ListAPIKeysFunc: func(context.Context, string) ([]ports.APIKeyRecord, error) { return keys, nil },
		ReplaceAPIKeyFunc: func(_ context.Context, _, id string, _ time.Time, fn func(ports.APIKeyRecord) (*ports.APIKeyRecord, []ports.AuditEntry, error)) error {
			for _, k := range keys {
				if k.ID == id {
					_, _, err := fn(k)
					return err
				}
			}
			return ports.ErrNotFound
		},
	}
	ids := &mocks.IDGeneratorMock{NewIDFunc: func() (string, error) { return domain.NewRawID(rand.Reader) }}
	svc := app.NewKeyService(admin, &mocks.AuditLogMock{}, &mocks.RequestLogStoreMock{}, nil, h.factors, testClock(h), ids, app.AuthCacheTTL(-1))
	_, u := h.login(t, "192.0.2.1", "")
	if _, err := svc.Issue(ctx, u, "sem totp", false, ""); err != nil {
		t.Fatalf("a live key without TOTP: %v", err)
	}
	secret, _ := h.enable(t, u)
	if _, err := svc.Issue(ctx, u, "teste", true, ""); err != nil {
		t.Fatalf("a test key with TOTP: %v", err)
	}
	if _, err := svc.Issue(ctx, u, "real", false, ""); !errors.Is(err, app.ErrSecondFactorRequired) {
		t.Fatalf("a live key without a code: %v", err)
	}
	if _, err := svc.Issue(ctx, u, "real", false, "000000"); !errors.Is(err, app.ErrInvalidSecondFactor) {
		t.Fatalf("a live key with a wrong code: %v", err)
	}
	live, err := svc.Issue(ctx, u, "real", false, h.code(t, secret, 0))
	if err != nil || live.Mode != domain.ModeLive {
		t.Fatalf("a live key with a code: %+v %v", live, err)
	}
	if _, err := svc.Rotate(ctx, u, live.ID, nil, h.code(t, secret, 0)); !errors.Is(err, app.ErrInvalidSecondFactor) {
		t.Fatalf("rotating with the code just used: %v", err)
	}
	if _, err := svc.Rotate(ctx, u, live.ID, nil, h.code(t, secret, 1)); err != nil {
		t.Fatalf("rotating with the next code: %v", err)
	}
	if _, err := svc.Rotate(ctx, u, keys[1].ID, nil, ""); err != nil {
		t.Fatalf("rotating a test key: %v", err)
	}
}
