// Package password hashes dashboard passwords with argon2id.
package password

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"

	"github.com/quitapix/quita/ports"
)

// Params are argon2id cost parameters.
type Params struct {
	Memory  uint32 // KiB
	Time    uint32
	Threads uint8
	KeyLen  uint32
}

// DefaultParams follow the OWASP password-storage recommendation for
// argon2id (19 MiB, 2 passes, 1 lane): a login costs a few tens of
// milliseconds of one core, well within the 250 ms login budget.
var DefaultParams = Params{Memory: 19 * 1024, Time: 2, Threads: 1, KeyLen: 32}

// ErrMalformedHash is returned by Verify for a hash it cannot read.
var ErrMalformedHash = errors.New("malformed password hash")

// Argon2id implements ports.PasswordHasher.
type Argon2id struct{ p Params }

var _ ports.PasswordHasher = Argon2id{}

// New returns a hasher with the given parameters.
func New(p Params) Argon2id { return Argon2id{p: p} }

// Hash implements ports.PasswordHasher in the PHC string format.
func (a Argon2id) Hash(password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(password), salt, a.p.Time, a.p.Memory, a.p.Threads, a.p.KeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, a.p.Memory, a.p.Time, a.p.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// Verify implements ports.PasswordHasher; the comparison is constant-time.
func (a Argon2id) Verify(encoded, password string) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, ErrMalformedHash
	}
	var p Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil {
		return false, ErrMalformedHash
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return false, ErrMalformedHash
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false, ErrMalformedHash
	}
	got := argon2.IDKey([]byte(password), salt, p.Time, p.Memory, p.Threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
