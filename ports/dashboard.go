package ports

import (
	"context"
	"errors"
	"time"
)

//go:generate go tool moq -rm -out ../mocks/dashboard.go -pkg mocks . UserStore KeyAdmin AuditLog RequestLogStore TokenDenylist SessionTokens LoginAttempts GuardStore RateLimiter DashboardHousekeeping

// Errors of the dashboard ports.
var (
	// ErrAPIKeyRevoked: the key exists in the account but is already
	// revoked, so it cannot be revoked or rotated again.
	ErrAPIKeyRevoked = errors.New("api key already revoked")
	// ErrInvalidToken: a session token is malformed, signed with another
	// algorithm or key, tampered with, or expired.
	ErrInvalidToken = errors.New("invalid session token")
)

// UserStore finds dashboard users.
type UserStore interface {
	// GetUserByEmail compares e-mails without case. ErrNotFound for an
	// unknown address, and for a user of a disabled sub-account, whose
	// logins stop with it.
	GetUserByEmail(ctx context.Context, email string) (*User, error)
}

// AuditEntry is one row of an account's audit log: who did what to which
// key (or which charge attempt a guard refused). It never holds a key
// cleartext, a password, a token or a payer document.
type AuditEntry struct {
	ID        string
	AccountID string
	// UserID is the dashboard user who acted; empty for API-key requests.
	UserID string
	// Action is e.g. "api_key.issued", "api_key.rotated",
	// "api_key.revoked", "charge.refused".
	Action         string
	KeyID          string
	KeyFingerprint string
	// Code qualifies the action (the fraud.* code of a refusal).
	Code      string
	CreatedAt time.Time
}

// KeyAdmin manages an account's API keys with their audit entries.
type KeyAdmin interface {
	// IssueAPIKey inserts k and audit in one transaction. ErrDuplicate when
	// the fingerprint exists.
	IssueAPIKey(ctx context.Context, k APIKeyRecord, audit AuditEntry) error
	// ReplaceAPIKey locks the account's key keyID until the end of the
	// transaction, calls fn with it, revokes it at `at`, and inserts the
	// successor fn returns (when not nil) and its audit entries, all in one
	// transaction. ErrNotFound when the account has no such key;
	// ErrAPIKeyRevoked when it is already revoked; an error of fn is
	// returned as is. Nothing is written on any error.
	ReplaceAPIKey(ctx context.Context, accountID, keyID string, at time.Time, fn func(old APIKeyRecord) (*APIKeyRecord, []AuditEntry, error)) error
	// ListAPIKeys returns every key of the account, newest first.
	ListAPIKeys(ctx context.Context, accountID string) ([]APIKeyRecord, error)
}

// AuditLog keeps audit entries.
type AuditLog interface {
	// InsertAuditEntry writes one entry on its own.
	InsertAuditEntry(ctx context.Context, e AuditEntry) error
	// ListAuditEntries returns up to limit entries of the account, newest
	// first.
	ListAuditEntries(ctx context.Context, accountID string, limit int) ([]AuditEntry, error)
}

// RequestLogEntry is one API request as the dashboard shows it: never a
// body, a header, a query string or a secret.
type RequestLogEntry struct {
	// RequestID is the X-Request-Id of the request.
	RequestID      string
	AccountID      string
	Mode           string
	KeyFingerprint string
	Method         string
	// Path is the route template (/v1/charges/{id}), not the raw path.
	Path      string
	Status    int
	Duration  time.Duration
	CreatedAt time.Time
}

// RequestLogQuery filters request logs, newest first.
type RequestLogQuery struct {
	AccountID string
	// KeyFingerprint filters when not empty.
	KeyFingerprint string
	Limit          int
}

// RequestLogStore keeps request logs.
type RequestLogStore interface {
	// InsertRequestLogs writes a batch in one statement.
	InsertRequestLogs(ctx context.Context, entries []RequestLogEntry) error
	// ListRequestLogs returns up to q.Limit entries of the account.
	ListRequestLogs(ctx context.Context, q RequestLogQuery) ([]RequestLogEntry, error)
}

// TokenDenylist remembers logged-out session tokens until they expire, in
// the database, so every process refuses them.
type TokenDenylist interface {
	// DenyToken adds the token id; denying it twice succeeds.
	DenyToken(ctx context.Context, tokenID string, expiresAt time.Time) error
	// TokenDenied reports whether the token id was denied.
	TokenDenied(ctx context.Context, tokenID string) (bool, error)
	// DenyUserTokens denies every token of the user issued at or before
	// t; a later call moves the cutoff, never back.
	DenyUserTokens(ctx context.Context, userID string, t time.Time) error
	// SessionDenied reports whether a token is denied, by its id or by
	// its user's cutoff (issued at or before it), in one read.
	SessionDenied(ctx context.Context, tokenID, userID string, issuedAt time.Time) (bool, error)
}

// SessionClaims are what a dashboard session token asserts.
type SessionClaims struct {
	// TokenID is the jti, the handle logout denies.
	TokenID   string
	UserID    string
	AccountID string
	IssuedAt  time.Time
	ExpiresAt time.Time
}

// SessionTokens signs and verifies dashboard session tokens.
type SessionTokens interface {
	// Sign returns the token for c.
	Sign(c SessionClaims) (string, error)
	// Verify checks the token's algorithm, signature and expiry at now.
	// ErrInvalidToken for any token it does not accept.
	Verify(token string, now time.Time) (SessionClaims, error)
}

// LoginAttempts counts failed logins per key in a fixed window, shared by
// every process when it is Redis.
type LoginAttempts interface {
	// Failures returns the failures counted for key and how long until the
	// count resets (0 when none).
	Failures(ctx context.Context, key string) (int, time.Duration, error)
	// AddFailure counts one failure; the first one starts a window.
	AddFailure(ctx context.Context, key string, window time.Duration) (int, time.Duration, error)
	// Reset forgets the failures of key.
	Reset(ctx context.Context, key string) error
}

// AccountSettings are an account's guard settings. A zero field means the
// service default.
type AccountSettings struct {
	// RateLimitPerSecond and RateLimitBurst bound requests per API key.
	RateLimitPerSecond int
	RateLimitBurst     int
	// VelocityPerHour bounds charges for one payer document per hour.
	VelocityPerHour int
	// AmountLimit caps one charge, in minor units.
	AmountLimit int64
	// CashoutPayerOnly restricts cashout refunds to the payer's own
	// document: a CPF/CNPJ key equal to the document the payer's bank
	// disclosed. Left to the default it is on in live mode and off in
	// test mode.
	CashoutPayerOnly Toggle
}

// Toggle is an on/off setting whose zero value leaves it to the
// service's default.
type Toggle int8

// The three states of a Toggle.
const (
	ToggleDefault Toggle = iota
	ToggleOn
	ToggleOff
)

// Valid reports whether t is one of the three states.
func (t Toggle) Valid() bool { return t == ToggleDefault || t == ToggleOn || t == ToggleOff }

// Or is the setting's value, def when it is left to the default.
func (t Toggle) Or(def bool) bool {
	switch t {
	case ToggleOn:
		return true
	case ToggleOff:
		return false
	}
	return def
}

// GuardStore keeps the guards' settings and reads what they count.
type GuardStore interface {
	// GetAccountSettings returns the stored settings (zero when none).
	GetAccountSettings(ctx context.Context, accountID string) (AccountSettings, error)
	// PutAccountSettings replaces the account's settings.
	PutAccountSettings(ctx context.Context, accountID string, s AccountSettings, at time.Time) error
	// ActiveAPIKeys counts the account's unrevoked API keys, of both modes.
	ActiveAPIKeys(ctx context.Context, accountID string) (int, error)
	// PayerBlocked reports whether the normalised document is on the
	// account's block list.
	PayerBlocked(ctx context.Context, accountID, document string) (bool, error)
	// BlockPayer adds a normalised document to the block list; adding it
	// twice succeeds.
	BlockPayer(ctx context.Context, accountID, document string, at time.Time) error
	// UnblockPayer removes it; removing an absent one succeeds.
	UnblockPayer(ctx context.Context, accountID, document string) error
	// AdmitPayerCharge is the velocity guard's atomic count: it admits the
	// create (and records it under its idempotency key) when fewer than
	// Max creates were admitted for the payer since Since, and reports
	// false otherwise. Concurrent calls for one payer are serialised, so
	// they never admit more than Max; a retry with an admitted key is
	// admitted again without counting twice.
	AdmitPayerCharge(ctx context.Context, a PayerAdmission) (bool, error)
}

// PayerAdmission asks the velocity guard to admit one create.
type PayerAdmission struct {
	Scope Scope
	// Key is the create's idempotency key.
	Key string
	// Payer is the normalised payer document.
	Payer      string
	Since, Now time.Time
	Max        int
}

// RateLimit is a GCRA limit: Rate events per Period with bursts of Burst.
type RateLimit struct {
	Rate   int
	Burst  int
	Period time.Duration
}

// RateDecision is a limiter's answer.
type RateDecision struct {
	Allowed   bool
	Remaining int
	// RetryAfter is how long until one more request passes (0 when
	// allowed); ResetAfter how long until the full burst is back.
	RetryAfter time.Duration
	ResetAfter time.Duration
}

// RateLimiter decides whether one more event of key fits its limit.
type RateLimiter interface {
	// Allow counts one event when it fits. An error means the limiter
	// could not decide; callers let the request through another way.
	Allow(ctx context.Context, key string, limit RateLimit) (RateDecision, error)
}

// DashboardHousekeeping deletes dashboard rows nobody needs any more, in
// bounded batches, so it is safe to run in every process.
type DashboardHousekeeping interface {
	// DeleteExpiredTokens removes up to limit denylist rows and up to limit
	// session rows (SessionStore) of tokens that expired before now (such
	// tokens fail verification anyway).
	DeleteExpiredTokens(ctx context.Context, now time.Time, limit int) (int, error)
	// DeleteRequestLogsBefore removes up to limit request logs created
	// before t. A store that keeps them by month may first drop every
	// month wholly before t, beyond limit (the count then includes an
	// estimate of their rows).
	DeleteRequestLogsBefore(ctx context.Context, t time.Time, limit int) (int, error)
	// DeletePayerAdmissionsBefore removes up to limit velocity admissions
	// older than t.
	DeletePayerAdmissionsBefore(ctx context.Context, t time.Time, limit int) (int, error)
	// EnsurePartitions makes the partitions of the history tables for the
	// current month and the months ahead that are missing, and reports how
	// many it made (none where the store does not partition).
	EnsurePartitions(ctx context.Context) (int, error)
}
