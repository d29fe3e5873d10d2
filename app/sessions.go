package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"runtime"
	"strings"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

var (
	// ErrInvalidCredentials: unknown e-mail or wrong password; the two are
	// indistinguishable by answer and by time.
	ErrInvalidCredentials = errors.New("invalid e-mail or password")
	// ErrInvalidSession: the dashboard token is missing, invalid, expired
	// or logged out.
	ErrInvalidSession = errors.New("invalid dashboard session")
	// ErrLoginChallenge: the second step of a login was given a token that
	// is not a live first step (expired, used, or its user's sessions were
	// ended since); the user logs in again.
	ErrLoginChallenge = errors.New("the login expired; log in again")
)

// ThrottledError is returned when a caller must wait before trying again.
type ThrottledError struct {
	RetryAfter time.Duration
}

func (e *ThrottledError) Error() string {
	return "too many attempts; retry after " + e.RetryAfter.String()
}

// SessionConfig tunes dashboard logins. Every counter is taken before the
// password is verified, so concurrent attempts cannot slip past a limit
// while their hashes run (docs/security.md, "Login").
type SessionConfig struct {
	// TTL of a session token (default 12 h).
	TTL time.Duration
	// MaxFailures attempts of one e-mail from one client address within
	// FailureWindow (default 5 in 15 min); a success clears the count.
	// The real user on another address is not affected.
	MaxFailures   int
	FailureWindow time.Duration
	// MaxFailuresPerEmail attempts of one e-mail from all addresses within
	// FailureWindow (default 50; a success clears it) bound a distributed
	// guess; past it only an address that logged in to this e-mail before
	// (KnownClientTTL, default 30 days) may keep trying.
	MaxFailuresPerEmail int
	KnownClientTTL      time.Duration
	// MaxAttemptsPerIP logins of any e-mail from one client address within
	// IPWindow (default 30 per minute) bound credential stuffing and the
	// hashing one address can demand.
	MaxAttemptsPerIP int
	IPWindow         time.Duration
	// MaxConcurrentHashes bounds password verifications in flight (default
	// GOMAXPROCS, between 2 and 8): each argon2id run holds 19 MiB. A login
	// that cannot start one within HashQueueWait (default 250 ms) is
	// refused with a 1 s Retry-After instead of queueing memory.
	MaxConcurrentHashes int
	HashQueueWait       time.Duration
}

// MaxPasswordBytes is the longest password Login hashes; a longer one is a
// wrong password without the cost of hashing it.
const MaxPasswordBytes = 1024

// DashboardUser is an authenticated dashboard session.
type DashboardUser struct {
	UserID    string
	AccountID string
	TokenID   string
	// IssuedAt is the token's issue time (whole seconds).
	IssuedAt  time.Time
	ExpiresAt time.Time
}

// Session is a successful login.
type Session struct {
	Token     string           `json:"token"`
	ExpiresAt domain.Timestamp `json:"expiresAt"`
	AccountID string           `json:"accountId"`
}

// SessionService logs dashboard users in and out, verifies their tokens
// and lists and ends their sessions.
type SessionService struct {
	users    ports.UserStore
	hasher   ports.PasswordHasher
	tokens   ports.SessionTokens
	denylist ports.TokenDenylist
	sessions ports.SessionStore
	factors  *SecondFactorService
	attempts ports.LoginAttempts
	clock    ports.Clock
	ids      ports.IDGenerator
	log      *slog.Logger
	cfg      SessionConfig
	// hashSlots is the semaphore of MaxConcurrentHashes.
	hashSlots chan struct{}
	// dummyHash is verified for unknown e-mails, so they cost as much
	// time as a wrong password.
	dummyHash string
}

// NewSessionService wires a session service.
func NewSessionService(users ports.UserStore, hasher ports.PasswordHasher, tokens ports.SessionTokens, denylist ports.TokenDenylist,
	sessions ports.SessionStore, factors *SecondFactorService, attempts ports.LoginAttempts, clock ports.Clock, ids ports.IDGenerator,
	log *slog.Logger, cfg SessionConfig,
) (*SessionService, error) {
	cfg = cfg.withDefaults()
	seed, err := ids.NewID()
	if err != nil {
		return nil, err
	}
	dummy, err := hasher.Hash(seed)
	if err != nil {
		return nil, err
	}
	return &SessionService{users: users, hasher: hasher, tokens: tokens, denylist: denylist, sessions: sessions, factors: factors,
		attempts: attempts, clock: clock, ids: ids, log: log, cfg: cfg, hashSlots: make(chan struct{}, cfg.MaxConcurrentHashes),
		dummyHash: dummy}, nil
}

func (c SessionConfig) withDefaults() SessionConfig {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defD := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	defD(&c.TTL, 12*time.Hour)
	def(&c.MaxFailures, 5)
	defD(&c.FailureWindow, 15*time.Minute)
	def(&c.MaxFailuresPerEmail, 50)
	defD(&c.KnownClientTTL, 30*24*time.Hour)
	def(&c.MaxAttemptsPerIP, 30)
	defD(&c.IPWindow, time.Minute)
	def(&c.MaxConcurrentHashes, min(max(runtime.GOMAXPROCS(0), 2), 8))
	defD(&c.HashQueueWait, 250*time.Millisecond)
	return c
}

// hashKey names an e-mail, a client address or both in the counters
// without storing either (they are personal data).
func hashKey(kind string, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return kind + ":" + hex.EncodeToString(h.Sum(nil)[:16])
}

func normEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// count takes one attempt of key atomically and refuses it past limit. A
// counter that cannot answer refuses too: the wiring falls back to an
// in-process counter, so this only happens when both fail.
func (s *SessionService) count(ctx context.Context, key string, limit int, window time.Duration) error {
	n, wait, err := s.attempts.AddFailure(ctx, key, window)
	if err != nil {
		s.log.WarnContext(ctx, "login throttle unavailable: refusing the login", "err", err)
		return &ThrottledError{RetryAfter: time.Second}
	}
	if n > limit {
		return &ThrottledError{RetryAfter: max(wait, time.Second)}
	}
	return nil
}

// hashSlot waits up to HashQueueWait for one of the MaxConcurrentHashes
// slots; the returned func gives it back.
func (s *SessionService) hashSlot(ctx context.Context) (func(), error) {
	select {
	case s.hashSlots <- struct{}{}:
		return func() { <-s.hashSlots }, nil
	default:
	}
	t := time.NewTimer(s.cfg.HashQueueWait)
	defer t.Stop()
	select {
	case s.hashSlots <- struct{}{}:
		return func() { <-s.hashSlots }, nil
	case <-t.C:
		return nil, &ThrottledError{RetryAfter: time.Second}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// lastSeenEvery is how stale a session's last-seen time may get before a
// request writes it: a session is seen to the minute, and a busy one
// costs a write a minute, not one per request.
const lastSeenEvery = time.Minute

// Verify resolves a session token. It reads the denylist on every call, so
// a logged-out token fails on every process at once, and notes when the
// session was last seen. ErrInvalidSession, also for the token of a
// login's second step.
func (s *SessionService) Verify(ctx context.Context, token string) (DashboardUser, error) {
	now := s.clock.Now()
	c, err := s.tokens.Verify(token, now)
	if err != nil || isChallenge(c.TokenID) {
		return DashboardUser{}, ErrInvalidSession
	}
	chk, err := s.sessions.CheckSession(ctx, c.TokenID, c.UserID, c.IssuedAt)
	if err != nil {
		return DashboardUser{}, err
	}
	if chk.Denied {
		return DashboardUser{}, ErrInvalidSession
	}
	if chk.Recorded && now.Sub(chk.LastSeenAt) >= lastSeenEvery {
		if err := s.sessions.TouchSession(ctx, c.TokenID, now); err != nil {
			s.log.WarnContext(ctx, "session last seen not recorded", "err", err)
		}
	}
	return DashboardUser{UserID: c.UserID, AccountID: c.AccountID, TokenID: c.TokenID, IssuedAt: c.IssuedAt, ExpiresAt: c.ExpiresAt}, nil
}

// Logout denies the session's token until it would have expired.
func (s *SessionService) Logout(ctx context.Context, u DashboardUser) error {
	return s.denylist.DenyToken(ctx, u.TokenID, u.ExpiresAt)
}

// LogoutEverywhere denies every session token of the user issued until
// now, on every device and process: a token's issue time is kept to the
// second, so one issued in this very second is denied too (logging in
// again a second later works).
func (s *SessionService) LogoutEverywhere(ctx context.Context, u DashboardUser) error {
	if err := s.denylist.DenyToken(ctx, u.TokenID, u.ExpiresAt); err != nil {
		return err
	}
	return s.denylist.DenyUserTokens(ctx, u.UserID, s.clock.Now().Truncate(time.Second))
}

// validLabel checks an API key label.
func validLabel(label string) error {
	if len([]rune(label)) > 64 {
		return domain.Invalid(domain.FieldSessionLabel, "%s must be at most 64 characters", domain.FieldSessionLabel)
	}
	return domain.CheckText(domain.FieldSessionLabel, label, false)
}
