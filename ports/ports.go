package ports

import (
	"context"
	"errors"
	"time"

	"github.com/quitapix/quita/domain"
)

// Errors every adapter maps its own failures to, in one place per adapter.
var (
	// ErrNotFound: no such record in the caller's scope.
	ErrNotFound = errors.New("not found")
	// ErrIdempotencyKeyExists: a record with the same idempotency key was
	// committed first; nothing of this call was written.
	ErrIdempotencyKeyExists = errors.New("idempotency key already used")
	// ErrDuplicate: a unique value (e-mail, fingerprint) already exists.
	ErrDuplicate = errors.New("duplicate")
	// ErrStoreUnavailable: the database could not be reached or refused
	// the session (connection lost, shutting down, too many connections,
	// timed out). The transaction did not commit; retry later.
	ErrStoreUnavailable = errors.New("database unavailable")
	// ErrAcquirerUnavailable: the acquirer could not be reached or answered
	// 5xx; the call may be retried.
	ErrAcquirerUnavailable = errors.New("acquirer unavailable")
	// ErrAcquirerRejected: the acquirer refused the request's content on
	// business grounds (a 4xx answer to it); retrying the same request
	// will not help. It is never an answer about Quita's credentials or
	// configuration: those are ErrAcquirerUnauthorized and
	// ErrAcquirerNotConfigured, which say nothing about the request.
	ErrAcquirerRejected = errors.New("acquirer rejected the request")
	// ErrAcquirerUnauthorized: the acquirer refused Quita's credentials (its
	// token endpoint answered 4xx, or the API answered 401 or 403 even with
	// a fresh token). Nothing is known about the request itself: it may
	// have been received before the credentials stopped working. Retry
	// once an operator fixes the account's credentials.
	ErrAcquirerUnauthorized = errors.New("acquirer refused the credentials")
	// ErrAcquirerNotConfigured: the account has no acquirer configured for
	// the call (none at all, not the capability the call needs, such as
	// Pix out, or a configuration the adapter cannot use). Nothing is known
	// about the request: retry once an operator configures the account.
	ErrAcquirerNotConfigured = errors.New("acquirer not configured for the account")
	// ErrRefundUnroutable: the refund has nowhere to go (a cashout with no
	// valid Pix key: no destination key and no payer document). No retry
	// can help; the refund fails and its money returns to the wallet.
	ErrRefundUnroutable = errors.New("the refund has no Pix key to go to")
)

// Scope is whose data a call may touch: one account in one mode. Live and
// test data never mix.
type Scope struct {
	AccountID string
	Mode      domain.Mode
}

// Clock tells the time. Production uses the wall clock; tests move it.
type Clock interface {
	Now() time.Time
}

// IDGenerator makes raw ids (domain.NewRawID over crypto/rand).
type IDGenerator interface {
	NewID() (string, error)
}

// IdempotencyKey is the durable scope of an idempotency key.
type IdempotencyKey struct {
	Scope
	Key string
}

// IdempotencyRecord is what a financial write answered, kept so that a
// retry with the same key gets the same answer.
type IdempotencyRecord struct {
	IdempotencyKey
	// Fingerprint is the SHA-256 of method, path and canonical body.
	Fingerprint string
	ResourceID  string
	StatusCode  int
	Body        []byte
	CreatedAt   time.Time
	// AnswerEvent is the id of one of the events committed with the
	// record whose envelope carries Body as its data.object (a charge
	// create's answer is its charge.created event's object): the store may
	// keep Body once, in that event. Empty: Body stands alone. Written
	// only.
	AnswerEvent string
	// SettlesIntent says the write recorded a cob intent of this key in
	// the store (IdempotencyStore) before asking for the cob: committing
	// the record deletes that intent, if it is the one of the charge's
	// txid. A create that recorded none (test mode, no Pix, or its intent
	// went to CobIntents) leaves it false and costs no DELETE. Written
	// only: a record read back has it false.
	SettlesIntent bool
}

// FlightStats is what a process's create flight did since it started:
// the batches the store wrote (one transaction each, concurrent creates
// grouped), the creates they carried and the time a batch was in flight.
// With one flight, Busy's rate is its utilization: near 1 means every
// create waits on it (docs/operations.md).
type FlightStats struct {
	Batches, Creates uint64
	Busy             time.Duration
}

// ChargeRef names one charge in its scope.
type ChargeRef struct {
	Scope
	ID string
}

// ChargeQuery filters a charge list. Results are newest first (created_at,
// then id, descending).
type ChargeQuery struct {
	Scope
	// Limit is 1..100.
	Limit int
	// StartingAfter is the raw id of the last charge of the previous page.
	StartingAfter    string
	Statuses         []domain.TxStatus
	CreatedAfter     *time.Time
	CreatedBefore    *time.Time
	CustomerDocument string
}

// ChargeChange is everything one change of a charge writes in the same
// database transaction as the charge itself.
type ChargeChange struct {
	Events []domain.Event
	// Entries are ledger journal entries; the store checks that each
	// balances, applies them to the wallet balances and holds, and fails
	// with domain.ErrInsufficientBalance rather than let a wallet go
	// negative.
	Entries []domain.JournalEntry
	// Refunds are inserted, or updated when their id exists.
	Refunds []domain.Refund
	// Returns are the charge's automatic Pix returns, inserted, or updated
	// when one of that end-to-end id exists.
	Returns []domain.PixReturn
	// Idempotency, when set, is inserted first; ErrIdempotencyKeyExists
	// when its key is already used (nothing is written).
	Idempotency *IdempotencyRecord
}

// ChargeChangeFunc computes a change of the locked charge.
type ChargeChangeFunc func(ctx context.Context, c *domain.Charge, tx ChargeTx) (ChargeChange, error)

// ChargeStore keeps charges with their outbox events.
type ChargeStore interface {
	// CreateCharge inserts c, its events and rec (when not nil) in one
	// transaction, and deletes the key's cob intent there when
	// rec.SettlesIntent. When rec's key already exists it returns
	// ErrIdempotencyKeyExists and writes nothing.
	CreateCharge(ctx context.Context, c *domain.Charge, events []domain.Event, rec *IdempotencyRecord) error
	// GetCharge loads a charge of the scope. ErrNotFound when it does not
	// exist or belongs to another account or mode.
	GetCharge(ctx context.Context, scope Scope, id string) (*domain.Charge, error)
	// GetChargeByID loads a charge by raw id alone, for the public checkout
	// and acquirer notifications. ErrNotFound when it does not exist.
	GetChargeByID(ctx context.Context, id string) (*domain.Charge, error)
	// UpdateCharge is the one way to change a stored charge. It locks the
	// charge row (SELECT ... FOR UPDATE on Postgres, the database write
	// lock on SQLite) until the end of the transaction, calls fn, and when
	// fn returns nil saves the charge and everything fn's ChargeChange
	// names (events, ledger entries, refunds, idempotency record) in the
	// same transaction; fn may read balances and refunds through tx under
	// the same lock. An error from fn rolls back and is returned as is.
	// ErrNotFound when the charge is not in scope.
	UpdateCharge(ctx context.Context, scope Scope, id string, fn ChargeChangeFunc) error
	// ListCharges returns up to q.Limit charges and whether more follow.
	// ErrNotFound when q.StartingAfter is not a charge of the scope.
	ListCharges(ctx context.Context, q ChargeQuery) ([]*domain.Charge, bool, error)
	// ListOpenExpired returns up to limit open charges (PENDING or
	// WAITING_PAYMENT) whose expiry is at or before now, in all scopes.
	ListOpenExpired(ctx context.Context, now time.Time, limit int) ([]ChargeRef, error)
	// ListOverdueNotices returns up to limit charges whose charge.overdue
	// is due at now (domain.Charge.OverdueNoticeAt at or before now), in
	// all scopes, earliest first.
	ListOverdueNotices(ctx context.Context, now time.Time, limit int) ([]ChargeRef, error)
	// ClaimPixReturns leases to the caller, until leaseUntil, up to limit
	// returns not final (REQUESTED or IN_PROGRESS) that are due at now,
	// in all scopes, oldest due first. A leased return is not claimed
	// again before its lease ends (FOR UPDATE SKIP LOCKED on Postgres), so
	// workers in several processes share them. Its steps are written with
	// UpdateCharge (ChargeChange.Returns) under its charge's lock.
	ClaimPixReturns(ctx context.Context, now, leaseUntil time.Time, limit int) ([]domain.PixReturn, error)
	// ListPixReturns returns up to limit returns of status, in all scopes,
	// oldest first: what an operator looks at (FAILED returns).
	ListPixReturns(ctx context.Context, status domain.PixReturnStatus, limit int) ([]domain.PixReturn, error)
}

// ClaimState is the answer of IdempotencyCache.Begin.
type ClaimState int

// Claim states.
const (
	// ClaimAcquired: this request owns the key and must Complete or Release.
	ClaimAcquired ClaimState = iota + 1
	// ClaimInFlight: another request holds the key now.
	ClaimInFlight
	// ClaimCompleted: a response is cached; compare fingerprints.
	ClaimCompleted
)

// Answered is a key whose answer is in the durable record
// (IdempotencyCache.CompleteInRecord).
type Answered struct {
	Key, Fingerprint string
	StatusCode       int
}

// Claim is the state of a key in the cache.
type Claim struct {
	State ClaimState
	// Fingerprint of the request that holds or completed the key.
	Fingerprint string
	// StatusCode and Body of the completed response.
	StatusCode int
	Body       []byte
	// InRecord: the completed response is in the durable record
	// (IdempotencyStore), not here — it was completed with
	// CompleteInRecord; Body is nil.
	InRecord bool
	// Remaining is how long an in-flight claim lasts unless its holder
	// extends it (0 when the cache cannot tell).
	Remaining time.Duration
}

// ProviderIntent records that a create is about to open a cob at the
// acquirer under TxID, before the charge is written: if the charge never
// commits (the insert fails, the process dies), the cob can be found and
// cancelled instead of staying payable with no charge behind it.
type ProviderIntent struct {
	Key       IdempotencyKey
	TxID      string
	CreatedAt time.Time
}

// IdempotencyStore is the durable side of exactly-once writes
// (app/exactlyonce): the idempotency records each write commits with its
// resource (ChargeStore.CreateCharge, UpdateCharge, CreatePayout), and the
// intents of live cobs, recorded before the acquirer is asked for them.
type IdempotencyStore interface {
	// GetIdempotencyRecord returns ErrNotFound when the key is unused.
	GetIdempotencyRecord(ctx context.Context, key IdempotencyKey) (*IdempotencyRecord, error)
	// RecordProviderIntent saves key's intent (keeping an earlier one of the
	// same key) and has committed when it returns.
	RecordProviderIntent(ctx context.Context, in ProviderIntent) error
	// ProviderIntentsBefore lists up to limit intents recorded before t,
	// oldest first.
	ProviderIntentsBefore(ctx context.Context, t time.Time, limit int) ([]ProviderIntent, error)
	// DeleteProviderIntent removes key's intent; removing none succeeds.
	DeleteProviderIntent(ctx context.Context, key IdempotencyKey) error
	// IdempotencyRecordOrIntent returns the idempotency record of in's key
	// when the key was used; otherwise it records in as
	// RecordProviderIntent does and returns ErrNotFound. A live create's
	// replay check and intent take one round trip this way.
	IdempotencyRecordOrIntent(ctx context.Context, in ProviderIntent) (*IdempotencyRecord, error)
	// FindChargeByTxID returns the raw id of the scope's charge whose Pix
	// txid is txid, or ErrNotFound: an intent whose txid a charge holds
	// was settled by that charge's commit.
	FindChargeByTxID(ctx context.Context, scope Scope, txid string) (string, error)
}

// CobIntents keeps cob intents in the shared cache (Redis) rather than the
// database, for the CacheFirst strategy of app/exactlyonce: a charge
// create whose claim the shared cache acquired skips the database's replay
// check — one round trip and one transaction fewer per create — so its
// intent, which must exist before the cob
// does, goes here, and its cob gets a txid of its own (a retry that
// finds the key used answers from the database after all, and its cob is
// cancelled by the sweep). The cache may lose intents (a flush, a
// failover): the cob of a create in flight at that moment is then left to
// expire at the PSP unpaid, as the database's unlogged intents are after a
// crash of Postgres.
type CobIntents interface {
	// RecordCobIntent saves ins, all or none; in.Key.Key is not kept. An
	// intent recorded before keeps its time.
	RecordCobIntent(ctx context.Context, ins ...ProviderIntent) error
	// StartCobIntent starts saving in as RecordCobIntent does and returns
	// at once; wait returns once it is saved, or why not (RecordCobIntent's
	// errors), and may be called again, from any goroutine, for the same
	// answer. A create starts it before it claims its key, so the write
	// travels beside the claim instead of after it.
	StartCobIntent(ctx context.Context, in ProviderIntent) (wait func() error)
	// CobIntentsBefore lists up to limit intents recorded before t,
	// oldest first, each with its scope, txid and time.
	CobIntentsBefore(ctx context.Context, t time.Time, limit int) ([]ProviderIntent, error)
	// DropCobIntent removes ins; removing none succeeds.
	DropCobIntent(ctx context.Context, ins ...ProviderIntent) error
}

// ErrCacheUnavailable: the idempotency cache failed or is being skipped
// after a failure; the caller uses the database alone.
var ErrCacheUnavailable = errors.New("idempotency cache unavailable")

// IdempotencyCache is the fast path of idempotency (Redis, or in process).
// It may lose everything at any time: the durable guarantee is the
// database's unique key, so callers treat any error as a cache miss.
type IdempotencyCache interface {
	// Begin claims key for one request for at most lockTTL, or reports who
	// holds it or what it answered.
	Begin(ctx context.Context, key, fingerprint string, lockTTL time.Duration) (Claim, error)
	// Complete caches the response for ttl, replacing the claim.
	Complete(ctx context.Context, key, fingerprint string, statusCode int, body []byte, ttl time.Duration) error
	// CompleteInRecord marks each key answered for ttl, replacing its
	// claim, without the answer: the durable record (IdempotencyStore)
	// holds it, and Begin reports ClaimCompleted with InRecord set. The
	// money writes complete this way, so the cache keeps a few bytes a key
	// instead of every answer, and the marks of concurrent writes go
	// together. Marking none succeeds.
	CompleteInRecord(ctx context.Context, ttl time.Duration, answered ...Answered) error
	// Release drops a claim this request holds without a response, so a
	// retry may run. It never removes a completed response.
	Release(ctx context.Context, key, fingerprint string) error
	// Extend renews an in-flight claim of this fingerprint for lockTTL
	// from now, so a live request keeps a short claim while a dead one
	// frees the key soon. It reports false, and changes nothing, when the
	// key holds a response, another claim or nothing.
	Extend(ctx context.Context, key, fingerprint string, lockTTL time.Duration) (bool, error)
}

// APIKeyRecord is a stored API key: never its cleartext.
type APIKeyRecord struct {
	ID          string
	AccountID   string
	Mode        domain.Mode
	Fingerprint string
	Prefix      string
	Label       string
	CreatedAt   time.Time
	RevokedAt   *time.Time
}

// User is a dashboard login of an account.
type User struct {
	ID           string
	AccountID    string
	Email        string
	PasswordHash string
	CreatedAt    time.Time
	// SecondFactor: the user logs in with a TOTP code after the password
	// (read by UserStore.GetUserByEmail; ignored when a user is created).
	SecondFactor bool
}

// AccountStore keeps merchant accounts and their dashboard users.
type AccountStore interface {
	// CreateAccount writes the account, its first user and keys in one
	// transaction. ErrDuplicate when the user's e-mail exists.
	CreateAccount(ctx context.Context, a domain.Account, u User, keys []APIKeyRecord) error
	// GetAccount returns ErrNotFound for an unknown id.
	GetAccount(ctx context.Context, id string) (*domain.Account, error)
	// CountAccounts counts every account (used to seed a demo account).
	CountAccounts(ctx context.Context) (int, error)
	// SetAccountDocument replaces the account's CPF or CNPJ (normalised;
	// "" clears it). ErrNotFound for an unknown id.
	SetAccountDocument(ctx context.Context, id, document string) error
}

// KeyStore authenticates API keys. Lookups always read the database: a
// revoked key must fail on the very next request on every process.
type KeyStore interface {
	// LookupAPIKey finds an active key by fingerprint with its account.
	// ErrNotFound for an unknown or revoked key.
	LookupAPIKey(ctx context.Context, fingerprint string) (*APIKeyRecord, *domain.Account, error)
}

// PasswordHasher hashes dashboard passwords (argon2id in production).
type PasswordHasher interface {
	// Hash returns an encoded hash that embeds its parameters and salt.
	Hash(password string) (string, error)
	// Verify reports whether password matches encoded, in time that does
	// not depend on where they differ.
	Verify(encoded, password string) (bool, error)
}
