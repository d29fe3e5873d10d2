package app_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

type sessionHarness struct {
	svc      *app.SessionService
	hasher   *mocks.PasswordHasherMock
	tokens   *mocks.SessionTokensMock
	denylist *mocks.TokenDenylistMock
	failures int
}

func newSessionHarness(t *testing.T) *sessionHarness {
	t.Helper()
	h := &sessionHarness{}
	user := &ports.User{ID: "usr_1", AccountID: "acct_1", Email: "ana@example.com", PasswordHash: "real-hash"}
	users := &mocks.UserStoreMock{GetUserByEmailFunc: func(_ context.Context, email string) (*ports.User, error) {
		if email == user.Email {
			return user, nil
		}
		return nil, ports.ErrNotFound
	}}
	h.hasher = &mocks.PasswordHasherMock{
		HashFunc: func(string) (string, error) { return "dummy-hash", nil },
		VerifyFunc: func(encoded, pw string) (bool, error) {
			return encoded == "real-hash" && pw == "right password", nil
		},
	}
	h.tokens = &mocks.SessionTokensMock{
		SignFunc: func(c ports.SessionClaims) (string, error) { return "token-" + c.TokenID, nil },
		VerifyFunc: func(tok string, _ time.Time) (ports.SessionClaims, error) {
			if tok != "token-ses_raw" {
				return ports.SessionClaims{}, ports.ErrInvalidToken
			}
			return ports.SessionClaims{TokenID: "ses_raw", UserID: "usr_1", AccountID: "acct_1", ExpiresAt: t0.Add(12 * time.Hour)}, nil
		},
	}
	denied := map[string]bool{}
	h.denylist = &mocks.TokenDenylistMock{
		DenyTokenFunc:   func(_ context.Context, id string, _ time.Time) error { denied[id] = true; return nil },
		TokenDeniedFunc: func(_ context.Context, id string) (bool, error) { return denied[id], nil },
	}
	attempts := &mocks.LoginAttemptsMock{
		FailuresFunc: func(context.Context, string) (int, time.Duration, error) { return h.failures, time.Minute, nil },
		AddFailureFunc: func(context.Context, string, time.Duration) (int, time.Duration, error) {
			h.failures++
			return h.failures, time.Minute, nil
		},
		ResetFunc: func(context.Context, string) error { h.failures = 0; return nil },
	}
	clock := &mocks.ClockMock{NowFunc: func() time.Time { return t0 }}
	ids := &mocks.IDGeneratorMock{NewIDFunc: func() (string, error) { return "raw", nil }}
	svc, err := app.NewSessionService(users, h.hasher, h.tokens, h.denylist, attempts, clock, ids,
		slog.New(slog.NewTextHandler(io.Discard, nil)), app.SessionConfig{MaxFailures: 3})
	if err != nil {
		t.Fatal(err)
	}
	h.svc = svc
	return h
}

// An unknown e-mail costs one password verification against the dummy
// hash, exactly like a wrong password against the real one, and answers
// the same error.
func TestLoginUnknownEmailVerifiesADummyHash(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, email, pw, hash string }{
		{"unknown email", "nobody@example.com", "right password", "dummy-hash"},
		{"wrong password", "ana@example.com", "wrong", "real-hash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newSessionHarness(t)
			_, err := h.svc.Login(context.Background(), tc.email, tc.pw)
			if !errors.Is(err, app.ErrInvalidCredentials) {
				t.Fatalf("err %v", err)
			}
			calls := h.hasher.VerifyCalls()
			if len(calls) != 1 || calls[0].Encoded != tc.hash {
				t.Fatalf("verify calls %+v, want one against %s", calls, tc.hash)
			}
		})
	}
}

func TestLoginThrottlesAfterFailures(t *testing.T) {
	t.Parallel()
	h := newSessionHarness(t)
	ctx := context.Background()
	for range 3 {
		if _, err := h.svc.Login(ctx, "ana@example.com", "wrong"); !errors.Is(err, app.ErrInvalidCredentials) {
			t.Fatal(err)
		}
	}
	verifies := len(h.hasher.VerifyCalls())
	_, err := h.svc.Login(ctx, "ana@example.com", "right password")
	var te *app.ThrottledError
	if !errors.As(err, &te) || te.RetryAfter != time.Minute {
		t.Fatalf("err %v, want a throttle", err)
	}
	if len(h.hasher.VerifyCalls()) != verifies {
		t.Error("a throttled login still verified the password")
	}
	h.failures = 2
	s, err := h.svc.Login(ctx, "ana@example.com", "right password")
	if err != nil || s.Token != "token-ses_raw" || s.AccountID != "acct_1" || !time.Time(s.ExpiresAt).Equal(t0.Add(12*time.Hour)) {
		t.Fatalf("login %+v %v", s, err)
	}
	if h.failures != 0 {
		t.Error("success did not reset the failures")
	}
}

func TestLogoutDeniesTheToken(t *testing.T) {
	t.Parallel()
	h := newSessionHarness(t)
	ctx := context.Background()
	u, err := h.svc.Verify(ctx, "token-ses_raw")
	if err != nil || u.UserID != "usr_1" || u.AccountID != "acct_1" {
		t.Fatalf("verify %+v %v", u, err)
	}
	if err := h.svc.Logout(ctx, u); err != nil {
		t.Fatal(err)
	}
	if _, err := h.svc.Verify(ctx, "token-ses_raw"); !errors.Is(err, app.ErrInvalidSession) {
		t.Fatalf("after logout: %v", err)
	}
	if _, err := h.svc.Verify(ctx, "forged"); !errors.Is(err, app.ErrInvalidSession) {
		t.Fatalf("forged: %v", err)
	}
}
