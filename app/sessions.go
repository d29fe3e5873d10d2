package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
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
)

// ThrottledError is returned when a caller must wait before trying again.
type ThrottledError struct {
	RetryAfter time.Duration
}

func (e *ThrottledError) Error() string {
	return "too many attempts; retry after " + e.RetryAfter.String()
}

// SessionConfig tunes dashboard logins.
type SessionConfig struct {
	// TTL of a session token (default 12 h).
	TTL time.Duration
	// MaxFailures failed logins of one e-mail within FailureWindow
	// (default 5 in 15 min) block further attempts until the window ends.
	MaxFailures   int
	FailureWindow time.Duration
}

// DashboardUser is an authenticated dashboard session.
type DashboardUser struct {
	UserID    string
	AccountID string
	TokenID   string
	ExpiresAt time.Time
}

// Session is a successful login.
type Session struct {
	Token     string           `json:"token"`
	ExpiresAt domain.Timestamp `json:"expiresAt"`
	AccountID string           `json:"accountId"`
}

// SessionService logs dashboard users in and out and verifies their
// tokens.
type SessionService struct {
	users    ports.UserStore
	hasher   ports.PasswordHasher
	tokens   ports.SessionTokens
	denylist ports.TokenDenylist
	attempts ports.LoginAttempts
	clock    ports.Clock
	ids      ports.IDGenerator
	log      *slog.Logger
	cfg      SessionConfig
	// dummyHash is verified for unknown e-mails, so they cost as much
	// time as a wrong password.
	dummyHash string
}

// NewSessionService wires a session service.
func NewSessionService(users ports.UserStore, hasher ports.PasswordHasher, tokens ports.SessionTokens, denylist ports.TokenDenylist,
	attempts ports.LoginAttempts, clock ports.Clock, ids ports.IDGenerator, log *slog.Logger, cfg SessionConfig,
) (*SessionService, error) {
	if cfg.TTL <= 0 {
		cfg.TTL = 12 * time.Hour
	}
	if cfg.MaxFailures <= 0 {
		cfg.MaxFailures = 5
	}
	if cfg.FailureWindow <= 0 {
		cfg.FailureWindow = 15 * time.Minute
	}
	seed, err := ids.NewID()
	if err != nil {
		return nil, err
	}
	dummy, err := hasher.Hash(seed)
	if err != nil {
		return nil, err
	}
	return &SessionService{users: users, hasher: hasher, tokens: tokens, denylist: denylist, attempts: attempts,
		clock: clock, ids: ids, log: log, cfg: cfg, dummyHash: dummy}, nil
}

// loginKey names an e-mail in the failure counters without storing it.
func loginKey(email string) string {
	sum := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(email))))
	return hex.EncodeToString(sum[:16])
}

// Login checks an e-mail and password and issues a session token.
// Errors: ErrInvalidCredentials, *ThrottledError.
func (s *SessionService) Login(ctx context.Context, email, password string) (Session, error) {
	key := loginKey(email)
	n, wait, err := s.attempts.Failures(ctx, key)
	if err != nil {
		s.log.WarnContext(ctx, "login throttle unavailable", "err", err)
	}
	if n >= s.cfg.MaxFailures {
		return Session{}, &ThrottledError{RetryAfter: wait}
	}
	user, err := s.users.GetUserByEmail(ctx, email)
	if err != nil && !errors.Is(err, ports.ErrNotFound) {
		return Session{}, err
	}
	hash := s.dummyHash
	if user != nil {
		hash = user.PasswordHash
	}
	ok, verr := s.hasher.Verify(hash, password)
	if user == nil || !ok || verr != nil {
		if verr != nil && user != nil {
			s.log.ErrorContext(ctx, "stored password hash unreadable", "user", user.ID, "err", verr)
		}
		if _, _, err := s.attempts.AddFailure(ctx, key, s.cfg.FailureWindow); err != nil {
			s.log.WarnContext(ctx, "login throttle unavailable", "err", err)
		}
		return Session{}, ErrInvalidCredentials
	}
	if n > 0 {
		if err := s.attempts.Reset(ctx, key); err != nil {
			s.log.WarnContext(ctx, "login throttle unavailable", "err", err)
		}
	}
	raw, err := s.ids.NewID()
	if err != nil {
		return Session{}, err
	}
	now := s.clock.Now()
	claims := ports.SessionClaims{TokenID: "ses_" + raw, UserID: user.ID, AccountID: user.AccountID,
		IssuedAt: now, ExpiresAt: now.Add(s.cfg.TTL).Truncate(time.Second)}
	token, err := s.tokens.Sign(claims)
	if err != nil {
		return Session{}, err
	}
	return Session{Token: token, ExpiresAt: domain.Timestamp(claims.ExpiresAt), AccountID: user.AccountID}, nil
}

// Verify resolves a session token. It reads the denylist on every call, so
// a logged-out token fails on every process at once. ErrInvalidSession.
func (s *SessionService) Verify(ctx context.Context, token string) (DashboardUser, error) {
	c, err := s.tokens.Verify(token, s.clock.Now())
	if err != nil {
		return DashboardUser{}, ErrInvalidSession
	}
	denied, err := s.denylist.TokenDenied(ctx, c.TokenID)
	if err != nil {
		return DashboardUser{}, err
	}
	if denied {
		return DashboardUser{}, ErrInvalidSession
	}
	return DashboardUser{UserID: c.UserID, AccountID: c.AccountID, TokenID: c.TokenID, ExpiresAt: c.ExpiresAt}, nil
}

// Logout denies the session's token until it would have expired.
func (s *SessionService) Logout(ctx context.Context, u DashboardUser) error {
	return s.denylist.DenyToken(ctx, u.TokenID, u.ExpiresAt)
}

// validLabel checks an API key label.
func validLabel(label string) error {
	if len([]rune(label)) > 64 {
		return domain.Invalid(domain.FieldSessionLabel, "%s must be at most 64 characters", domain.FieldSessionLabel)
	}
	return nil
}
