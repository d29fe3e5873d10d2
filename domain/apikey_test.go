package domain_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/quitapix/quita/domain"
)

var apikeyShape = regexp.MustCompile(`^qt_(live|test)_[A-Za-z0-9_-]{32}$`)

func TestNewAPIKey(t *testing.T) {
	t.Parallel()
	for _, mode := range []domain.Mode{domain.ModeLive, domain.ModeTest} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			seen := map[string]bool{}
			for range 500 {
				key, err := domain.NewAPIKey(mode, rand.Reader)
				if err != nil {
					t.Fatal(err)
				}
				if !apikeyShape.MatchString(key) || !strings.HasPrefix(key, "qt_"+string(mode)+"_") || len(key) != 40 {
					t.Fatalf("NewAPIKey(%s) = %q, want qt_%s_ and 32 base64url characters", mode, key, mode)
				}
				got, err := domain.ParseAPIKey(key)
				if err != nil || got != mode {
					t.Fatalf("ParseAPIKey(%q) = %q, %v; want %s", key, got, err, mode)
				}
				if seen[key] {
					t.Fatalf("NewAPIKey returned %q twice", key)
				}
				seen[key] = true
			}
		})
	}
}

// Base64url without padding of 24 known bytes; the expected strings were
// written by hand from RFC 4648 §5 (0 → "A", 63 → "_").
func TestNewAPIKeyEncoding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode domain.Mode
		rnd  []byte
		want string
	}{
		{domain.ModeLive, make([]byte, 24), "qt_live_" + strings.Repeat("A", 32)},
		{domain.ModeTest, bytes.Repeat([]byte{0xff}, 24), "qt_test_" + strings.Repeat("_", 32)},
		{domain.ModeLive, bytes.Repeat([]byte{0xfb, 0xef, 0xbe}, 8), "qt_live_" + strings.Repeat("-", 32)},
	}
	for _, tt := range tests {
		got, err := domain.NewAPIKey(tt.mode, bytes.NewReader(tt.rnd))
		if err != nil || got != tt.want {
			t.Errorf("NewAPIKey(%s, % x) = %q, %v; want %q", tt.mode, tt.rnd, got, err, tt.want)
		}
	}
}

func TestNewAPIKeyRejects(t *testing.T) {
	t.Parallel()
	for _, mode := range []domain.Mode{"", "prod", "LIVE"} {
		if key, err := domain.NewAPIKey(mode, rand.Reader); err == nil {
			t.Errorf("NewAPIKey(%q) = %q, want an error", mode, key)
		}
	}
	if key, err := domain.NewAPIKey(domain.ModeLive, bytes.NewReader(make([]byte, 23))); err == nil {
		t.Errorf("NewAPIKey with 23 random bytes = %q, want an error", key)
	}
}

func TestParseAPIKeyRejects(t *testing.T) {
	t.Parallel()
	secret := strings.Repeat("A", 32)
	for _, key := range []string{
		"",
		"qt_live_",
		"qt_live_" + secret[:31],
		"qt_live_" + secret + "A",
		"qt_prod_" + secret,
		"qt_Live_" + secret,
		"QT_live_" + secret,
		"xx_live_" + secret,
		"qtlive_" + secret + "A",
		"qt__live_" + secret[:31],
		"live_" + secret,
		"qt_live_" + secret[:31] + "=",    // padding
		"qt_live_" + secret[:31] + "+",    // standard, not URL, alphabet
		"qt_live_" + secret[:31] + "/",    // standard, not URL, alphabet
		"qt_live_" + secret[:31] + " ",    // white space
		"qt_live_" + secret[:31] + "\n",   // the decoder skips new lines
		"qt_live_" + secret[:30] + "\r\n", // the decoder skips new lines
		"qt_live_" + secret[:30] + "é",    // 32 bytes, 31 characters
		" qt_live_" + secret,
		"qt_live_" + secret + " ",
		"qt_live_" + secret + "\n", // as read from a file
	} {
		if mode, err := domain.ParseAPIKey(key); !errors.Is(err, domain.ErrAPIKeyMalformed) {
			t.Errorf("ParseAPIKey(%q) = %q, %v; want ErrAPIKeyMalformed", key, mode, err)
		}
	}
}

func TestAPIKeyFingerprint(t *testing.T) {
	t.Parallel()
	tests := []struct{ key, want string }{
		// FIPS 180-2 appendix B.1 test vector.
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		// Computed with `printf '%s' KEY | sha256sum`.
		{"qt_live_" + strings.Repeat("A", 32), "8554ba4841a3d04b6fa1be9005e4658d5c9438f24e1d86c5af70adb5dcc1d821"},
		{"qt_test_abcdefghijklmnopqrstuvwxyz0123-_", "acc8ebf3bcf09df655d0822a3a153eae4cfc5feea7fe0e1ddb2818f52c074a71"},
	}
	for _, tt := range tests {
		if got := domain.APIKeyFingerprint(tt.key); got != tt.want {
			t.Errorf("APIKeyFingerprint(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
	a := domain.APIKeyFingerprint("qt_live_" + strings.Repeat("A", 32))
	b := domain.APIKeyFingerprint("qt_live_" + strings.Repeat("A", 31) + "B")
	if a == b {
		t.Error("keys differing in the last character share a fingerprint")
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(a) {
		t.Errorf("fingerprint %q is not 64 lower-case hex characters", a)
	}
}

func TestAPIKeyPrefix(t *testing.T) {
	t.Parallel()
	tests := []struct{ key, want string }{
		{"qt_live_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345", "qt_live_ABCD"},
		{"qt_test_-_-_efghijklmnopqrstuvwxyz012345", "qt_test_-_-_"},
		{"qt_live_ABC", "qt_live_ABC"},
		{"", ""},
	}
	for _, tt := range tests {
		got := domain.APIKeyPrefix(tt.key)
		if got != tt.want {
			t.Errorf("APIKeyPrefix(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
	if domain.APIKeyDisplayLen != 12 {
		t.Errorf("APIKeyDisplayLen = %d, the spec says 12", domain.APIKeyDisplayLen)
	}
}

func TestModeValid(t *testing.T) {
	t.Parallel()
	for m, want := range map[domain.Mode]bool{"live": true, "test": true, "": false, "LIVE": false, "sandbox": false} {
		if got := m.Valid(); got != want {
			t.Errorf("Mode(%q).Valid() = %v, want %v", m, got, want)
		}
	}
}

// FuzzParseAPIKey: no input panics, and what is accepted is exactly a key
// NewAPIKey could have issued: the prefix of its mode and 32 characters that
// decode to 24 bytes and encode back to themselves.
func FuzzParseAPIKey(f *testing.F) {
	f.Add("qt_live_" + strings.Repeat("A", 32))
	f.Add("qt_test_" + strings.Repeat("_", 32))
	f.Add("qt_live_" + strings.Repeat("A", 31) + "\n")
	f.Add("qt_live_" + strings.Repeat("A", 32) + "\n")
	f.Add("qt_test_" + strings.Repeat("-", 30) + "==")
	f.Add("qt_live_")
	f.Add("")
	f.Fuzz(func(t *testing.T, key string) {
		mode, err := domain.ParseAPIKey(key)
		if err != nil {
			if !errors.Is(err, domain.ErrAPIKeyMalformed) || mode != "" {
				t.Fatalf("ParseAPIKey(%q) = %q, %v; want \"\", ErrAPIKeyMalformed", key, mode, err)
			}
			return
		}
		if !apikeyShape.MatchString(key) || !strings.HasPrefix(key, "qt_"+string(mode)+"_") {
			t.Fatalf("ParseAPIKey(%q) = %q, but the key does not have that shape", key, mode)
		}
		secret := key[len("qt_live_"):]
		b, err := base64.RawURLEncoding.DecodeString(secret)
		if err != nil || len(b) != 24 || base64.RawURLEncoding.EncodeToString(b) != secret {
			t.Fatalf("ParseAPIKey(%q) accepted a secret that is not 24 bytes in canonical base64url", key)
		}
	})
}
