package app

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// Audit actions on API keys.
const (
	AuditKeyIssued  = "api_key.issued"
	AuditKeyRotated = "api_key.rotated"
	AuditKeyRevoked = "api_key.revoked"
)

// KeyService is the dashboard's API-key management: issue, list, rotate,
// revoke, each scoped to the session's account and audited, plus the audit
// and request logs.
//
// A live key (issued, or the successor of a rotation) asks a user with
// TOTP for a fresh code (SecondFactorService.StepUp); test keys and users
// without TOTP need none.
type KeyService struct {
	keys     ports.KeyAdmin
	audit    ports.AuditLog
	requests ports.RequestLogStore
	flusher  Flusher
	factors  *SecondFactorService
	clock    ports.Clock
	ids      ports.IDGenerator
	authTTL  time.Duration
}

// Flusher writes buffered request logs now.
type Flusher interface {
	Flush(ctx context.Context) error
}

// NewKeyService wires a key service.
func NewKeyService(keys ports.KeyAdmin, audit ports.AuditLog, requests ports.RequestLogStore, flusher *RequestLogWriter,
	factors *SecondFactorService, clock ports.Clock, ids ports.IDGenerator, ttl AuthCacheTTL,
) *KeyService {
	return &KeyService{keys: keys, audit: audit, requests: requests, flusher: flusher, factors: factors, clock: clock, ids: ids,
		authTTL: time.Duration(ttl)}
}

// stepUp asks for the fresh code a live key needs (none without a second
// factor service: tests that wire none).
func (s *KeyService) stepUp(ctx context.Context, u DashboardUser, mode domain.Mode, code string) error {
	if mode != domain.ModeLive || s.factors == nil {
		return nil
	}
	return s.factors.StepUp(ctx, u, code)
}

// revocationMargin covers the drift between two processes' clocks over one
// AuthCacheTTL.
const revocationMargin = 50 * time.Millisecond

// awaitAuthCaches returns once no process can still trust a key lookup made
// before the revocation just committed (see AuthCacheTTL).
func (s *KeyService) awaitAuthCaches(ctx context.Context) error {
	return awaitAuthTTL(ctx, s.authTTL)
}

// awaitAuthTTL waits out one AuthCacheTTL of ttl and the margin: every
// process's lookup cached before the caller's change has then expired.
func awaitAuthTTL(ctx context.Context, ttl time.Duration) error {
	if ttl <= 0 {
		return nil
	}
	t := time.NewTimer(ttl + revocationMargin)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// IssuedKey is a new key with its cleartext, shown once.
type IssuedKey struct {
	ID          string
	APIKey      string
	Fingerprint string
	Prefix      string
	Label       string
	Mode        domain.Mode
	CreatedAt   time.Time
}

func (s *KeyService) newKey(accountID string, mode domain.Mode, label string, now time.Time) (IssuedKey, ports.APIKeyRecord, error) {
	key, err := domain.NewAPIKey(mode, rand.Reader)
	if err != nil {
		return IssuedKey{}, ports.APIKeyRecord{}, err
	}
	raw, err := s.ids.NewID()
	if err != nil {
		return IssuedKey{}, ports.APIKeyRecord{}, err
	}
	rec := ports.APIKeyRecord{ID: domain.PrefixAPIKey + raw, AccountID: accountID, Mode: mode,
		Fingerprint: domain.APIKeyFingerprint(key), Prefix: domain.APIKeyPrefix(key), Label: label, CreatedAt: now}
	return IssuedKey{ID: rec.ID, APIKey: key, Fingerprint: rec.Fingerprint, Prefix: rec.Prefix, Label: label, Mode: mode,
		CreatedAt: now}, rec, nil
}

func (s *KeyService) auditEntry(u DashboardUser, action string, k ports.APIKeyRecord, at time.Time) (ports.AuditEntry, error) {
	raw, err := s.ids.NewID()
	if err != nil {
		return ports.AuditEntry{}, err
	}
	return ports.AuditEntry{ID: "aud_" + raw, AccountID: u.AccountID, UserID: u.UserID, Action: action,
		KeyID: k.ID, KeyFingerprint: k.Fingerprint, CreatedAt: at}, nil
}

// Issue creates a live key, or a test key when test is set; code is the
// fresh TOTP code a live key needs when the user has TOTP. Errors of
// SecondFactorService.StepUp.
func (s *KeyService) Issue(ctx context.Context, u DashboardUser, label string, test bool, code string) (IssuedKey, error) {
	if err := validLabel(label); err != nil {
		return IssuedKey{}, err
	}
	mode := domain.ModeLive
	if test {
		mode = domain.ModeTest
	}
	if err := s.stepUp(ctx, u, mode, code); err != nil {
		return IssuedKey{}, err
	}
	now := s.clock.Now()
	out, rec, err := s.newKey(u.AccountID, mode, label, now)
	if err != nil {
		return IssuedKey{}, err
	}
	audit, err := s.auditEntry(u, AuditKeyIssued, rec, now)
	if err != nil {
		return IssuedKey{}, err
	}
	if err := s.keys.IssueAPIKey(ctx, rec, audit); err != nil {
		return IssuedKey{}, err
	}
	return out, nil
}

// keyMode is the mode of the account's key id. ErrNotFound,
// ports.ErrAPIKeyRevoked.
func (s *KeyService) keyMode(ctx context.Context, u DashboardUser, id string) (domain.Mode, error) {
	all, err := s.keys.ListAPIKeys(ctx, u.AccountID)
	if err != nil {
		return "", err
	}
	for _, k := range all {
		if k.ID == id {
			if k.RevokedAt != nil {
				return "", ports.ErrAPIKeyRevoked
			}
			return k.Mode, nil
		}
	}
	return "", ports.ErrNotFound
}

// List returns the account's active keys, newest first, without secrets.
func (s *KeyService) List(ctx context.Context, u DashboardUser) ([]ports.APIKeyRecord, error) {
	all, err := s.keys.ListAPIKeys(ctx, u.AccountID)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, k := range all {
		if k.RevokedAt == nil {
			out = append(out, k)
		}
	}
	return out, nil
}

// Rotate revokes the account's key id and issues a successor of the same
// mode (and label, unless one is given) in one transaction; a live one
// needs code as Issue does. ErrNotFound for a key of another account,
// ports.ErrAPIKeyRevoked for a revoked one. It answers once no process can
// still accept the old key (AuthCacheTTL).
func (s *KeyService) Rotate(ctx context.Context, u DashboardUser, id string, label *string, code string) (IssuedKey, error) {
	if label != nil {
		if err := validLabel(*label); err != nil {
			return IssuedKey{}, err
		}
	}
	// The key's mode decides the code; it is read before the transaction,
	// which must not wait on the code's own write (SQLite has one writer).
	mode, err := s.keyMode(ctx, u, id)
	if err != nil {
		return IssuedKey{}, err
	}
	if err := s.stepUp(ctx, u, mode, code); err != nil {
		return IssuedKey{}, err
	}
	now := s.clock.Now()
	var out IssuedKey
	err = s.keys.ReplaceAPIKey(ctx, u.AccountID, id, now, func(old ports.APIKeyRecord) (*ports.APIKeyRecord, []ports.AuditEntry, error) {
		if old.Mode != mode {
			return nil, nil, ports.ErrNotFound // unreachable: a key's mode never changes
		}
		l := old.Label
		if label != nil {
			l = *label
		}
		issued, rec, err := s.newKey(u.AccountID, old.Mode, l, now)
		if err != nil {
			return nil, nil, err
		}
		revoked, err := s.auditEntry(u, AuditKeyRotated, old, now)
		if err != nil {
			return nil, nil, err
		}
		created, err := s.auditEntry(u, AuditKeyIssued, rec, now)
		if err != nil {
			return nil, nil, err
		}
		out = issued
		return &rec, []ports.AuditEntry{revoked, created}, nil
	})
	if err != nil {
		return IssuedKey{}, err
	}
	if err := s.awaitAuthCaches(ctx); err != nil {
		return IssuedKey{}, err
	}
	return out, nil
}

// Revoke revokes the account's key id for good. Revoking a revoked key
// succeeds and writes nothing. ErrNotFound for a key of another account.
// It answers once no process can still accept the key (AuthCacheTTL).
func (s *KeyService) Revoke(ctx context.Context, u DashboardUser, id string) error {
	now := s.clock.Now()
	err := s.keys.ReplaceAPIKey(ctx, u.AccountID, id, now, func(old ports.APIKeyRecord) (*ports.APIKeyRecord, []ports.AuditEntry, error) {
		e, err := s.auditEntry(u, AuditKeyRevoked, old, now)
		return nil, []ports.AuditEntry{e}, err
	})
	if errors.Is(err, ports.ErrAPIKeyRevoked) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.awaitAuthCaches(ctx)
}

// AuditLogs lists the account's audit entries, newest first.
func (s *KeyService) AuditLogs(ctx context.Context, u DashboardUser, limit int) ([]ports.AuditEntry, error) {
	return s.audit.ListAuditEntries(ctx, u.AccountID, limit)
}

// RequestLogs lists the account's recent API requests, newest first,
// optionally for one key. This process's buffered entries are written
// first, so a dashboard sees its own latest requests.
func (s *KeyService) RequestLogs(ctx context.Context, u DashboardUser, fingerprint string, limit int) ([]ports.RequestLogEntry, error) {
	if s.flusher != nil {
		_ = s.flusher.Flush(ctx)
	}
	return s.requests.ListRequestLogs(ctx, ports.RequestLogQuery{AccountID: u.AccountID, KeyFingerprint: fingerprint, Limit: limit})
}
