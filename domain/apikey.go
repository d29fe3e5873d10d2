package domain

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Mode separates live money from test money. Live and test keys see
// disjoint data.
type Mode string

// The two modes.
const (
	ModeLive Mode = "live"
	ModeTest Mode = "test"
)

// Valid reports whether m is live or test.
func (m Mode) Valid() bool { return m == ModeLive || m == ModeTest }

// APIKeyServicePrefix starts every Quita API key.
const APIKeyServicePrefix = "qt"

// APIKeyDisplayLen is how many leading characters of a key are kept for
// display (the record's "prefix").
const APIKeyDisplayLen = 12

// ErrAPIKeyMalformed is returned for a string that is not a Quita key.
var ErrAPIKeyMalformed = errors.New("malformed api key")

// NewAPIKey returns a fresh key cleartext: "qt_live_" or "qt_test_" and 24
// random bytes in base64url without padding (32 characters).
func NewAPIKey(mode Mode, rnd io.Reader) (string, error) {
	if !mode.Valid() {
		return "", fmt.Errorf("new api key: mode %q", mode)
	}
	var b [24]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", fmt.Errorf("new api key: %w", err)
	}
	return APIKeyServicePrefix + "_" + string(mode) + "_" + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// ParseAPIKey checks the shape of a key and returns its mode. It does not
// say whether the key exists; look its fingerprint up for that.
func ParseAPIKey(key string) (Mode, error) {
	rest, ok := strings.CutPrefix(key, APIKeyServicePrefix+"_")
	if !ok {
		return "", ErrAPIKeyMalformed
	}
	var mode Mode
	switch {
	case strings.HasPrefix(rest, "live_"):
		mode = ModeLive
	case strings.HasPrefix(rest, "test_"):
		mode = ModeTest
	default:
		return "", ErrAPIKeyMalformed
	}
	secret := rest[len("live_"):]
	if len(secret) != 32 {
		return "", ErrAPIKeyMalformed
	}
	// The decoder skips '\r' and '\n', so 32 characters can decode to fewer
	// than 24 bytes: only a full 24 proves the shape NewAPIKey issues.
	if b, err := base64.RawURLEncoding.DecodeString(secret); err != nil || len(b) != 24 {
		return "", ErrAPIKeyMalformed
	}
	return mode, nil
}

// APIKeyFingerprint is the lower-case hex SHA-256 of the whole key: the only
// form, with the display prefix, in which a key is stored.
func APIKeyFingerprint(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// APIKeyPrefix returns the first 12 characters of a key, for display.
func APIKeyPrefix(key string) string {
	if len(key) < APIKeyDisplayLen {
		return key
	}
	return key[:APIKeyDisplayLen]
}
