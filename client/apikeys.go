package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Session is a dashboard login.
type Session struct {
	// Token authenticates the dashboard routes: c.With(WithToken(s.Token)).
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expiresAt"`
	AccountID string    `json:"accountId"`
}

// AuthService is /v1/auth.
type AuthService struct{ c *Client }

// Login exchanges a dashboard user's e-mail and password for a token.
// Wrong credentials are ErrUnauthorized (code invalid_credentials); a user
// with two-step verification is ErrUnauthorized with code
// second_factor_required (use LoginWithCode).
func (s *AuthService) Login(ctx context.Context, email, password string) (*Session, error) {
	return s.LoginWithCode(ctx, email, password, "")
}

// LoginWithCode logs in a user with two-step verification: code is the
// authenticator app's current code or a recovery code, each accepted
// once. A wrong or used code is ErrUnauthorized (code
// invalid_second_factor).
func (s *AuthService) LoginWithCode(ctx context.Context, email, password, code string) (*Session, error) {
	var out Session
	body := map[string]string{"email": email, "password": password}
	if code != "" {
		body["code"] = code
	}
	r := request{method: http.MethodPost, path: "/auth/login", noAuth: true, class: notSentOnly, body: body}
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Logout ends the session of the client's token.
func (s *AuthService) Logout(ctx context.Context) error {
	_, err := s.c.do(ctx, request{method: http.MethodPost, path: "/auth/logout", bearer: true, class: notSentOnly}, nil)
	return err
}

// IssuedKey is a new API key with its cleartext, shown only this once.
type IssuedKey struct {
	ID string `json:"id"`
	// APIKey is the cleartext: store it now, it cannot be read again.
	APIKey      string    `json:"apiKey"`
	Fingerprint string    `json:"fingerprint"`
	Prefix      string    `json:"prefix"`
	Label       string    `json:"label"`
	CreatedAt   time.Time `json:"createdAt"`
}

// APIKey is a key as listed: metadata only.
type APIKey struct {
	ID     string `json:"id"`
	Prefix string `json:"prefix"`
	Label  string `json:"label"`
	// CreatedAt is when it was issued.
	CreatedAt time.Time `json:"createdAt"`
}

// KeyParams issue a key.
type KeyParams struct {
	// Label (≤ 64 characters) names the key's use.
	Label string `json:"label,omitempty"`
	// Test issues a test-mode key.
	Test bool `json:"test,omitempty"`
	// Code is a fresh code of the authenticator app: a live key needs one
	// when the user has two-step verification (otherwise a 403 *Error
	// with code second_factor_required or invalid_second_factor).
	Code string `json:"code,omitempty"`
	// IdempotencyKey (8–128 characters), when set, makes the issue safe to
	// retry: the same key and params return the first key's cleartext
	// instead of issuing another. The client then retries it as it does a
	// money write.
	IdempotencyKey string `json:"-"`
}

// APIKeysService is /v1/api-keys: dashboard routes, authenticated by the
// client's token (WithToken), scoped to the token's account.
type APIKeysService struct{ c *Client }

// Issue issues a key.
func (s *APIKeysService) Issue(ctx context.Context, p KeyParams) (*IssuedKey, error) {
	var out IssuedKey
	if _, err := s.c.do(ctx, keyedWrite(request{method: http.MethodPost, path: "/api-keys", body: p, bearer: true}, p.IdempotencyKey), &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// List lists the account's active keys.
func (s *APIKeysService) List(ctx context.Context) ([]*APIKey, error) {
	var out struct {
		Data []*APIKey `json:"data"`
	}
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/api-keys", bearer: true}, &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// Rotate revokes key id and issues its replacement in one step; label
// (when not nil) renames it. The old key stops working when this returns.
func (s *APIKeysService) Rotate(ctx context.Context, id string, label *string) (*IssuedKey, error) {
	return s.RotateWithCode(ctx, id, label, "")
}

// RotateWithCode is Rotate with a fresh code of the authenticator app,
// which rotating a live key needs when the user has two-step
// verification.
func (s *APIKeysService) RotateWithCode(ctx context.Context, id string, label *string, code string) (*IssuedKey, error) {
	var out IssuedKey
	body := map[string]*string{}
	if label != nil {
		body["label"] = label
	}
	if code != "" {
		body["code"] = &code
	}
	r := request{method: http.MethodPost, path: "/api-keys/" + pathID(id) + "/rotate", body: body, bearer: true, class: notSentOnly}
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Revoke revokes a key for good.
func (s *APIKeysService) Revoke(ctx context.Context, id string) error {
	_, err := s.c.do(ctx, request{method: http.MethodDelete, path: "/api-keys/" + pathID(id), bearer: true, class: notSentOnly}, nil)
	return err
}

// AuditEntry is one key-management action of the account.
type AuditEntry struct {
	ID string `json:"id"`
	// Action is e.g. api_key.issued, api_key.rotated, api_key.revoked.
	Action         string    `json:"action"`
	UserID         string    `json:"userId,omitempty"`
	KeyID          string    `json:"keyId,omitempty"`
	KeyFingerprint string    `json:"keyFingerprint,omitempty"`
	Code           string    `json:"code,omitempty"`
	CreatedAt      time.Time `json:"createdAt"`
}

// AuditLogs lists the account's latest key-management actions, newest
// first (limit 1–100; 0 is the server's default, 50).
func (s *APIKeysService) AuditLogs(ctx context.Context, limit int) ([]*AuditEntry, error) {
	var out struct {
		Data []*AuditEntry `json:"data"`
	}
	r := request{method: http.MethodGet, path: "/audit-logs", query: limitQuery(limit), bearer: true}
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// RequestLogEntry is one API request of the account, as logged.
type RequestLogEntry struct {
	RequestID string `json:"requestId"`
	Method    string `json:"method"`
	Path      string `json:"path"`
	Status    int    `json:"status"`
	// DurationMs is the time the server took, in milliseconds.
	DurationMs        float64   `json:"durationMs"`
	APIKeyFingerprint string    `json:"apiKeyFingerprint"`
	Mode              string    `json:"mode"`
	CreatedAt         time.Time `json:"createdAt"`
}

// RequestLogs lists the account's latest API requests, newest first, all
// or those of one key (its fingerprint, from Issue or Rotate); limit 1–100
// (0: the default, 25).
func (s *APIKeysService) RequestLogs(ctx context.Context, keyFingerprint string, limit int) ([]*RequestLogEntry, error) {
	var out struct {
		Data []*RequestLogEntry `json:"data"`
	}
	q := limitQuery(limit)
	if keyFingerprint != "" {
		q.Set("apiKeyFingerprint", keyFingerprint)
	}
	r := request{method: http.MethodGet, path: "/request-logs", query: q, bearer: true}
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}

func limitQuery(limit int) url.Values {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	return q
}
