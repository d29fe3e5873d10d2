package ports

import (
	"context"
	"errors"
	"time"
)

// ErrTOTPNotPending: the TOTP secret being confirmed is no longer the
// user's pending one (set up again, confirmed or disabled meanwhile).
var ErrTOTPNotPending = errors.New("the TOTP secret is not pending")

//go:generate go tool moq -rm -out ../mocks/security.go -pkg mocks . SessionStore UserSecurityStore OneTimeCodes

// SessionRecord is one dashboard session as its user sees it listed. It
// holds no token: TokenID is the token's jti.
type SessionRecord struct {
	TokenID string
	UserID  string
	// CreatedAt is the token's issue time (whole seconds, as the token
	// holds it); ExpiresAt its expiry.
	CreatedAt time.Time
	ExpiresAt time.Time
	// LastSeenAt is when a request last used the session, to the minute.
	LastSeenAt time.Time
	// UserAgent is the login's User-Agent, cut to 256 bytes of printable
	// text; Client its address masked (a /24 or a /48), never in full.
	UserAgent string
	Client    string
}

// SessionCheck is what a request learns about its session in one read.
type SessionCheck struct {
	// Denied: logged out (its jti), or issued at or before its user's
	// cutoff.
	Denied bool
	// Recorded: the session has a row (sessions issued before the rows
	// existed have none); LastSeenAt is the row's.
	Recorded   bool
	LastSeenAt time.Time
}

// SessionStore keeps the dashboard sessions a user can list and end. A
// session is ended by denying its token (TokenDenylist); the rows only
// describe them.
type SessionStore interface {
	// RecordSession writes a new session's row.
	RecordSession(ctx context.Context, s SessionRecord) error
	// CheckSession reads the token's denial (as TokenDenylist.SessionDenied)
	// and its row, in one query.
	CheckSession(ctx context.Context, tokenID, userID string, issuedAt time.Time) (SessionCheck, error)
	// TouchSession sets the row's last_seen_at to at when it is earlier.
	TouchSession(ctx context.Context, tokenID string, at time.Time) error
	// ListSessions returns up to limit sessions of the user that are
	// neither expired at now nor denied, newest first.
	ListSessions(ctx context.Context, userID string, now time.Time, limit int) ([]SessionRecord, error)
	// GetSession returns one session of the user, denied or not.
	// ErrNotFound for an unknown id or another user's session.
	GetSession(ctx context.Context, userID, tokenID string) (SessionRecord, error)
	// EndOtherSessions denies, in one transaction, every token of the user
	// issued before keepIssuedAt's second (the user's cutoff) and every
	// recorded session not expired at now other than keepTokenID, and
	// reports how many recorded sessions it ended.
	EndOtherSessions(ctx context.Context, userID, keepTokenID string, keepIssuedAt, now time.Time) (int, error)
}

// SecondFactor is a user's TOTP state.
type SecondFactor struct {
	// Secret is the active TOTP secret (base32); "" while TOTP is off.
	Secret    string
	EnabledAt *time.Time
	// PendingSecret is a secret being set up, not yet confirmed with a
	// code ("" when none).
	PendingSecret string
	// LastStep is the 30-second step of the last code accepted: a code of
	// that step or an earlier one is never accepted again.
	LastStep int64
	// RecoveryLeft counts the unused recovery codes.
	RecoveryLeft int
}

// Enabled reports whether the user logs in with a second factor.
func (f SecondFactor) Enabled() bool { return f.Secret != "" }

// UserSecurityStore keeps what protects a dashboard login beyond its
// e-mail: the password hash, the TOTP secret (sealed at rest like webhook
// secrets when a master key is set) and the recovery codes, stored only as
// hashes.
type UserSecurityStore interface {
	// GetUserSecurity returns the user with its second factor.
	// ErrNotFound for an unknown id.
	GetUserSecurity(ctx context.Context, userID string) (*User, SecondFactor, error)
	// SetPendingTOTP replaces the user's pending secret.
	SetPendingTOTP(ctx context.Context, userID, secret string, at time.Time) error
	// EnableTOTP makes the pending secret, when it is still pending,
	// the active one, with step as its last accepted step, and replaces the
	// recovery codes with codeHashes, in one transaction.
	// ErrTOTPNotPending when pending is not the user's pending secret.
	EnableTOTP(ctx context.Context, userID, pending string, step int64, codeHashes []string, at time.Time) error
	// DisableTOTP removes the user's secrets and recovery codes; removing
	// none succeeds.
	DisableTOTP(ctx context.Context, userID string) error
	// UseTOTPStep records step as the last accepted one when it is later
	// than the recorded one and TOTP is on, atomically: of concurrent
	// calls with one step, one reports true.
	UseTOTPStep(ctx context.Context, userID string, step int64) (bool, error)
	// UseRecoveryCode marks the user's unused code of hash used at at and
	// reports whether there was one: each code works once.
	UseRecoveryCode(ctx context.Context, userID, hash string, at time.Time) (bool, error)
	// SetPassword replaces the password hash of the user of email
	// (compared without case) and returns the user. ErrNotFound for an
	// unknown address.
	SetPassword(ctx context.Context, email, hash string) (*User, error)
}

// OneTimeCodes are RFC 6238 TOTP codes: HMAC-SHA-1, six digits, 30-second
// steps (what every authenticator app reads from an otpauth:// URI).
type OneTimeCodes interface {
	// NewTOTPSecret returns a fresh random secret (base32) and its
	// otpauth:// URI naming issuer and account.
	NewTOTPSecret(issuer, account string) (secret, uri string, err error)
	// TOTPURI is the otpauth:// URI of an existing secret.
	TOTPURI(issuer, account, secret string) (string, error)
	// TOTPCode is the code of secret at step (Unix seconds / 30).
	TOTPCode(secret string, step int64) (string, error)
}
