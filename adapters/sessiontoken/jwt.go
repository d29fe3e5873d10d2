// Package sessiontoken signs and verifies dashboard session tokens: JWTs
// signed with HS256 and nothing else (golang-jwt/jwt/v5).
package sessiontoken

import (
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/quitapix/quita/ports"
)

// MinSecretLen is the shortest HS256 secret accepted (256 bits).
const MinSecretLen = 32

// HS256 implements ports.SessionTokens.
type HS256 struct{ secret []byte }

var _ ports.SessionTokens = (*HS256)(nil)

// New returns a signer over secret, which must hold at least MinSecretLen
// bytes.
func New(secret []byte) (*HS256, error) {
	if len(secret) < MinSecretLen {
		return nil, fmt.Errorf("sessiontoken: secret must be at least %d bytes", MinSecretLen)
	}
	return &HS256{secret: append([]byte(nil), secret...)}, nil
}

// RandomSecret returns a fresh secret, for a process without a configured
// one (its tokens die with it and no other process accepts them).
func RandomSecret() []byte {
	b := make([]byte, MinSecretLen)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
	return b
}

type claims struct {
	Account string `json:"account"`
	jwt.RegisteredClaims
}

// Sign implements ports.SessionTokens.
func (h *HS256) Sign(c ports.SessionClaims) (string, error) {
	t := jwt.NewWithClaims(jwt.SigningMethodHS256, claims{
		Account: c.AccountID,
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   c.UserID,
			ID:        c.TokenID,
			IssuedAt:  jwt.NewNumericDate(c.IssuedAt),
			ExpiresAt: jwt.NewNumericDate(c.ExpiresAt),
		},
	})
	return t.SignedString(h.secret)
}

// Verify implements ports.SessionTokens: only HS256 under this secret, with
// exp, sub, account and jti present, and not expired at now.
func (h *HS256) Verify(token string, now time.Time) (ports.SessionClaims, error) {
	var c claims
	_, err := jwt.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		if t.Method != jwt.SigningMethodHS256 {
			return nil, errors.New("unexpected signing method")
		}
		return h.secret, nil
	},
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(func() time.Time { return now }),
	)
	if err != nil || c.Subject == "" || c.Account == "" || c.ID == "" {
		return ports.SessionClaims{}, ports.ErrInvalidToken
	}
	out := ports.SessionClaims{TokenID: c.ID, UserID: c.Subject, AccountID: c.Account, ExpiresAt: c.ExpiresAt.Time}
	if c.IssuedAt != nil {
		out.IssuedAt = c.IssuedAt.Time
	}
	return out, nil
}
