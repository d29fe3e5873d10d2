package app_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/ratelimit"
	"github.com/quitapix/quita/adapters/totp"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

type sessionHarness struct {
	svc      *app.SessionService
	hasher   *mocks.PasswordHasherMock
	tokens   *mocks.SessionTokensMock
	denylist *mocks.TokenDenylistMock
	clock    *testkit.Clock
}

// gate blocks every password verification until it is opened, counting
// how many run at once.
type gate struct {
	open             chan struct{}
	inFlight, maxRun atomic.Int32
	started          atomic.Int32
}

func newGate() *gate { return &gate{open: make(chan struct{})} }

func (g *gate) verify(encoded, pw string) (bool, error) {
	n := g.inFlight.Add(1)
	g.started.Add(1)
	for {
		m := g.maxRun.Load()
		if n <= m || g.maxRun.CompareAndSwap(m, n) {
			break
		}
	}
	<-g.open
	g.inFlight.Add(-1)
	return encoded == "real-hash" && pw == "right password", nil
}

func newSessionHarness(t *testing.T, cfg app.SessionConfig) *sessionHarness {
	t.Helper()
	h := &sessionHarness{clock: testkit.NewClock(t0)}
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
	var mu sync.Mutex
	denied := map[string]bool{}
	h.denylist = &mocks.TokenDenylistMock{
		DenyTokenFunc: func(_ context.Context, id string, _ time.Time) error {
			mu.Lock()
			defer mu.Unlock()
			denied[id] = true
			return nil
		},
	}
	sessions := &mocks.SessionStoreMock{
		RecordSessionFunc: func(context.Context, ports.SessionRecord) error { return nil },
		CheckSessionFunc: func(_ context.Context, id, _ string, _ time.Time) (ports.SessionCheck, error) {
			mu.Lock()
			defer mu.Unlock()
			return ports.SessionCheck{Denied: denied[id]}, nil
		},
	}
	ids := &mocks.IDGeneratorMock{NewIDFunc: func() (string, error) { return "raw", nil }}
	if cfg.MaxFailures == 0 {
		cfg.MaxFailures = 3
	}
	clock := &mocks.ClockMock{NowFunc: h.clock.Now}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	attempts := ratelimit.NewMemoryAttempts(h.clock.Now)
	factors := app.NewSecondFactorService(&mocks.UserSecurityStoreMock{}, totp.Codes{}, attempts, clock, log, cfg)
	svc, err := app.NewSessionService(users, h.hasher, h.tokens, h.denylist, sessions, factors, attempts, clock, ids, log, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.svc = svc
	return h
}

func isThrottled(err error) bool {
	var te *app.ThrottledError
	return errors.As(err, &te) && te.RetryAfter >= time.Second
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
			h := newSessionHarness(t, app.SessionConfig{})
			_, err := h.svc.Login(context.Background(), tc.email, tc.pw, "192.0.2.1")
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

// Failures lock one e-mail from one address only (security.md, item 14): the
// attacker's address is throttled, the real user elsewhere logs in.
func TestLoginThrottlesPerEmailAndAddress(t *testing.T) {
	t.Parallel()
	h := newSessionHarness(t, app.SessionConfig{})
	ctx := context.Background()
	for range 3 {
		if _, err := h.svc.Login(ctx, "ana@example.com", "wrong", "203.0.113.9"); !errors.Is(err, app.ErrInvalidCredentials) {
			t.Fatal(err)
		}
	}
	verifies := len(h.hasher.VerifyCalls())
	_, err := h.svc.Login(ctx, "Ana@Example.com ", "right password", "203.0.113.9")
	var te *app.ThrottledError
	if !errors.As(err, &te) || te.RetryAfter != 15*time.Minute {
		t.Fatalf("err %v, want a 15 min throttle", err)
	}
	if len(h.hasher.VerifyCalls()) != verifies {
		t.Error("a throttled login still verified the password")
	}
	s, err := h.svc.Login(ctx, "ana@example.com", "right password", "198.51.100.7")
	if err != nil || s.Token != "token-ses_raw" || s.AccountID != "acct_1" || !time.Time(s.ExpiresAt).Equal(t0.Add(12*time.Hour)) {
		t.Fatalf("the real user from another address: %+v %v", s, err)
	}
	h.clock.Advance(15 * time.Minute)
	if _, err := h.svc.Login(ctx, "ana@example.com", "right password", "203.0.113.9"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
	// A success clears that address's count: three more failures fit.
	for range 3 {
		if _, err := h.svc.Login(ctx, "ana@example.com", "wrong", "203.0.113.9"); !errors.Is(err, app.ErrInvalidCredentials) {
			t.Fatal(err)
		}
	}
}

// A distributed guess at one e-mail (one try per address) is bounded by
// the per-e-mail cap; an address that logged in before keeps working.
func TestLoginBoundsADistributedAttackOnOneEmail(t *testing.T) {
	t.Parallel()
	h := newSessionHarness(t, app.SessionConfig{MaxFailuresPerEmail: 6})
	ctx := context.Background()
	if _, err := h.svc.Login(ctx, "ana@example.com", "right password", "198.51.100.7"); err != nil {
		t.Fatal(err)
	}
	var refused int
	for i := range 20 {
		_, err := h.svc.Login(ctx, "ana@example.com", "guess", fmt.Sprintf("203.0.113.%d", i))
		switch {
		case isThrottled(err):
			refused++
		case !errors.Is(err, app.ErrInvalidCredentials):
			t.Fatal(err)
		}
	}
	if refused != 14 || len(h.hasher.VerifyCalls()) != 7 {
		t.Fatalf("%d of 20 guesses refused, %d verifications; want 14 and 7 (cap 6 after the real login)",
			refused, len(h.hasher.VerifyCalls()))
	}
	if _, err := h.svc.Login(ctx, "ana@example.com", "right password", "192.0.2.50"); !isThrottled(err) {
		t.Fatalf("a new address past the cap: %v, want a throttle", err)
	}
	if _, err := h.svc.Login(ctx, "ana@example.com", "right password", "198.51.100.7"); err != nil {
		t.Fatalf("the known address was locked out: %v", err)
	}
}

// One address cannot spread guesses over many e-mails.
func TestLoginThrottlesPerAddress(t *testing.T) {
	t.Parallel()
	h := newSessionHarness(t, app.SessionConfig{MaxAttemptsPerIP: 4})
	ctx := context.Background()
	for i := range 4 {
		if _, err := h.svc.Login(ctx, fmt.Sprintf("u%d@example.com", i), "x", "203.0.113.9"); !errors.Is(err, app.ErrInvalidCredentials) {
			t.Fatal(err)
		}
	}
	if _, err := h.svc.Login(ctx, "u9@example.com", "x", "203.0.113.9"); !isThrottled(err) {
		t.Fatalf("5th e-mail from one address: %v", err)
	}
	if len(h.hasher.VerifyCalls()) != 4 {
		t.Errorf("%d verifications, want 4", len(h.hasher.VerifyCalls()))
	}
	if _, err := h.svc.Login(ctx, "ana@example.com", "right password", "198.51.100.7"); err != nil {
		t.Fatalf("another address: %v", err)
	}
}

// security.md, item 4: the count is taken before the hash runs. 29 wrong
// passwords still hashing must not let the right one through.
func TestLoginCountsBeforeVerifying(t *testing.T) {
	t.Parallel()
	h := newSessionHarness(t, app.SessionConfig{MaxFailures: 5, MaxConcurrentHashes: 64, HashQueueWait: time.Second})
	g := newGate()
	h.hasher.VerifyFunc = g.verify
	ctx := context.Background()
	errs := make(chan error, 29)
	for range 29 {
		go func() {
			_, err := h.svc.Login(ctx, "ana@example.com", "wrong", "203.0.113.9")
			errs <- err
		}()
	}
	var throttled, invalid int
	// Wait until every wrong login is either refused or hashing.
	for deadline := time.Now().Add(5 * time.Second); throttled+int(g.started.Load()) < 29; {
		select {
		case err := <-errs:
			if !isThrottled(err) {
				t.Fatalf("a wrong password answered %v before the gate opened", err)
			}
			throttled++
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("logins neither refused nor hashing")
		}
	}
	right := make(chan error, 1)
	go func() { _, err := h.svc.Login(ctx, "ana@example.com", "right password", "203.0.113.9"); right <- err }()
	select {
	case err := <-right:
		if !isThrottled(err) {
			t.Fatalf("the right password in the burst: %v, want a throttle", err)
		}
	case <-time.After(2 * time.Second):
		close(g.open)
		if err := <-right; err == nil {
			t.Fatal("the right password logged in within a burst of 29 wrong ones")
		}
		t.Fatal("the right password was hashed although 5 failures were in flight")
	}
	close(g.open)
	for throttled+invalid < 29 {
		switch err := <-errs; {
		case isThrottled(err):
			throttled++
		case errors.Is(err, app.ErrInvalidCredentials):
			invalid++
		default:
			t.Fatal(err)
		}
	}
	if invalid != 5 || g.maxRun.Load() != 5 {
		t.Fatalf("%d wrong passwords verified (%d at once), want 5", invalid, g.maxRun.Load())
	}
}

// security.md, item 5: at most MaxConcurrentHashes verifications run; the
// rest are refused quickly instead of each holding 19 MiB.
func TestLoginBoundsConcurrentHashes(t *testing.T) {
	t.Parallel()
	h := newSessionHarness(t, app.SessionConfig{MaxConcurrentHashes: 2, HashQueueWait: 50 * time.Millisecond, MaxAttemptsPerIP: 100})
	g := newGate()
	h.hasher.VerifyFunc = g.verify
	ctx := context.Background()
	errs := make(chan error, 10)
	start := time.Now()
	for i := range 10 {
		go func() {
			_, err := h.svc.Login(ctx, fmt.Sprintf("u%d@example.com", i), "x", "203.0.113.9")
			errs <- err
		}()
	}
	for range 8 {
		select {
		case err := <-errs:
			if !isThrottled(err) {
				t.Fatalf("excess login: %v, want a throttle", err)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("excess logins waited for the hashes (%d running)", g.inFlight.Load())
		}
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("refusals took %v", took)
	}
	close(g.open)
	for range 2 {
		if err := <-errs; !errors.Is(err, app.ErrInvalidCredentials) {
			t.Fatal(err)
		}
	}
	if g.maxRun.Load() != 2 {
		t.Fatalf("%d verifications ran at once, want 2", g.maxRun.Load())
	}
}

type brokenAttempts struct{ ports.LoginAttempts }

func (brokenAttempts) AddFailure(context.Context, string, time.Duration) (int, time.Duration, error) {
	return 0, 0, errors.New("counter down")
}

// Overlong passwords are wrong without being hashed.
func TestLoginRefusesOverlongPasswordsWithoutHashing(t *testing.T) {
	t.Parallel()
	h := newSessionHarness(t, app.SessionConfig{})
	_, err := h.svc.Login(context.Background(), "ana@example.com", strings.Repeat("x", app.MaxPasswordBytes+1), "192.0.2.1")
	if !errors.Is(err, app.ErrInvalidCredentials) || len(h.hasher.VerifyCalls()) != 0 {
		t.Fatalf("err %v, %d verifications", err, len(h.hasher.VerifyCalls()))
	}
}

// A counter that cannot count refuses the login (fail closed).
func TestLoginFailsClosedWithoutCounters(t *testing.T) {
	t.Parallel()
	svc, err := app.NewSessionService(&mocks.UserStoreMock{}, &mocks.PasswordHasherMock{HashFunc: func(string) (string, error) { return "h", nil }},
		&mocks.SessionTokensMock{}, &mocks.TokenDenylistMock{}, &mocks.SessionStoreMock{}, nil, brokenAttempts{}, &mocks.ClockMock{NowFunc: time.Now},
		&mocks.IDGeneratorMock{NewIDFunc: func() (string, error) { return "raw", nil }}, slog.New(slog.NewTextHandler(io.Discard, nil)), app.SessionConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Login(context.Background(), "ana@example.com", "right password", "192.0.2.1"); !isThrottled(err) {
		t.Fatalf("err %v, want a throttle", err)
	}
}

func TestLogoutDeniesTheToken(t *testing.T) {
	t.Parallel()
	h := newSessionHarness(t, app.SessionConfig{})
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
