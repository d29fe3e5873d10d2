package idempotency

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/quitapix/quita/ports"
)

// MinSealSecretLen is the shortest secret NewSealed accepts: 256 bits,
// what QUITA_MASTER_KEY is and QUITA_JWT_SECRET must be at least.
const MinSealSecretLen = 32

// sealedVersion leads every sealed body, so the format can change.
const sealedVersion byte = 1

// sealedNamePrefix names Sealed's entries in the inner cache, apart from
// the money writes' "idem:" keys when both share one cache.
const sealedNamePrefix = "idemw:"

var _ ports.IdempotencyCache = (*Sealed)(nil)

// ErrSealedBody is returned by Begin when a cached response does not open
// under this process's secret: tampered with, or written under another
// secret that happens to name the same entry (no other way is known). The
// caller treats it like any cache error.
var ErrSealedBody = errors.New("idempotency: cached response does not open")

// Sealed keeps answers that carry one-time secrets (an API key's
// cleartext, a webhook signing secret) in another cache without letting
// that cache read them. Each key becomes an entry named by
// HMAC-SHA256 under a key derived from the server's secret, so the inner
// cache holds neither the account, the mode nor the merchant's key; each
// response body is sealed with AES-256-GCM under a key derived (HKDF-SHA256)
// from the server's secret together with the entry's key, with the name,
// fingerprint and status as additional data. Claims, fingerprints, status
// codes and TTLs pass through unchanged, so Sealed keeps the
// ports.IdempotencyCache contract of the cache it wraps; the fingerprint
// the inner cache sees is the caller's (for the HTTP layer, SHA-256 of a
// request, which carries no secret).
//
// Every process that shares the inner cache must hold the same secret to
// share entries; a process with another secret names other entries and
// never meets them. It is safe for concurrent use.
type Sealed struct {
	inner   ports.IdempotencyCache
	prk     []byte // HKDF pseudorandom key of the secret
	nameKey []byte // HMAC key naming entries
}

// NewSealed wraps inner, deriving every key from secret (at least
// MinSealSecretLen bytes; NewSealed keeps no reference to it).
func NewSealed(inner ports.IdempotencyCache, secret []byte) (*Sealed, error) {
	if len(secret) < MinSealSecretLen {
		return nil, fmt.Errorf("idempotency: sealing secret must be at least %d bytes", MinSealSecretLen)
	}
	prk, err := hkdf.Extract(sha256.New, secret, []byte("quita idempotency v1"))
	if err != nil {
		return nil, err
	}
	nameKey, err := hkdf.Expand(sha256.New, prk, "entry name", sha256.Size)
	if err != nil {
		return nil, err
	}
	return &Sealed{inner: inner, prk: prk, nameKey: nameKey}, nil
}

// name is the inner cache's key for key.
func (s *Sealed) name(key string) string {
	m := hmac.New(sha256.New, s.nameKey)
	m.Write([]byte(key))
	return sealedNamePrefix + hex.EncodeToString(m.Sum(nil))
}

// aead is the cipher of key's entry: its own AES-256 key, so opening one
// entry needs the server's secret and that entry's key.
func (s *Sealed) aead(key string) (cipher.AEAD, error) {
	k, err := hkdf.Expand(sha256.New, s.prk, "response body\x00"+key, 32)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(k)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// additionalData binds a sealed body to its entry, fingerprint and status,
// so none of them can be swapped in the inner cache unnoticed.
func additionalData(name, fingerprint string, statusCode int) []byte {
	ad := make([]byte, 0, len(name)+len(fingerprint)+12)
	ad = binary.AppendUvarint(ad, uint64(len(name)))
	ad = append(ad, name...)
	ad = binary.AppendUvarint(ad, uint64(len(fingerprint)))
	ad = append(ad, fingerprint...)
	return binary.BigEndian.AppendUint32(ad, uint32(statusCode))
}

// seal is version ‖ nonce ‖ AES-GCM(body).
func (s *Sealed) seal(key, name, fingerprint string, statusCode int, body []byte) ([]byte, error) {
	aead, err := s.aead(key)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 1+aead.NonceSize(), 1+aead.NonceSize()+len(body)+aead.Overhead())
	out[0] = sealedVersion
	_, _ = rand.Read(out[1:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return aead.Seal(out, out[1:], body, additionalData(name, fingerprint, statusCode)), nil
}

func (s *Sealed) open(key, name, fingerprint string, statusCode int, sealed []byte) ([]byte, error) {
	aead, err := s.aead(key)
	if err != nil {
		return nil, err
	}
	if len(sealed) < 1+aead.NonceSize() || sealed[0] != sealedVersion {
		return nil, ErrSealedBody
	}
	nonce, ct := sealed[1:1+aead.NonceSize()], sealed[1+aead.NonceSize():]
	body, err := aead.Open(nil, nonce, ct, additionalData(name, fingerprint, statusCode))
	if err != nil {
		return nil, ErrSealedBody
	}
	if len(body) == 0 {
		body = nil // as the caller completed it, whichever empty body that was
	}
	return body, nil
}

// Begin implements ports.IdempotencyCache, opening a cached response.
// Errors: the inner cache's, and ErrSealedBody.
func (s *Sealed) Begin(ctx context.Context, key, fingerprint string, lockTTL time.Duration) (ports.Claim, error) {
	name := s.name(key)
	c, err := s.inner.Begin(ctx, name, fingerprint, lockTTL)
	if err != nil || c.State != ports.ClaimCompleted || c.InRecord {
		return c, err // nothing sealed to open
	}
	body, err := s.open(key, name, c.Fingerprint, c.StatusCode, c.Body)
	if err != nil {
		return ports.Claim{}, fmt.Errorf("%w (entry %s)", err, name)
	}
	c.Body = body
	return c, nil
}

// Complete implements ports.IdempotencyCache, sealing body.
func (s *Sealed) Complete(ctx context.Context, key, fingerprint string, statusCode int, body []byte, ttl time.Duration) error {
	if err := checkTTL(ttl); err != nil {
		return err
	}
	name := s.name(key)
	sealed, err := s.seal(key, name, fingerprint, statusCode, body)
	if err != nil {
		return err
	}
	return s.inner.Complete(ctx, name, fingerprint, statusCode, sealed, ttl)
}

// CompleteInRecord implements ports.IdempotencyCache: there is no answer
// to seal.
func (s *Sealed) CompleteInRecord(ctx context.Context, ttl time.Duration, answered ...ports.Answered) error {
	named := make([]ports.Answered, len(answered))
	for i, a := range answered {
		named[i] = ports.Answered{Key: s.name(a.Key), Fingerprint: a.Fingerprint, StatusCode: a.StatusCode}
	}
	return s.inner.CompleteInRecord(ctx, ttl, named...)
}

// Release implements ports.IdempotencyCache.
func (s *Sealed) Release(ctx context.Context, key, fingerprint string) error {
	return s.inner.Release(ctx, s.name(key), fingerprint)
}

// Extend implements ports.IdempotencyCache.
func (s *Sealed) Extend(ctx context.Context, key, fingerprint string, lockTTL time.Duration) (bool, error) {
	return s.inner.Extend(ctx, s.name(key), fingerprint, lockTTL)
}
