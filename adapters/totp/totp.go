// Package totp is ports.OneTimeCodes over github.com/pquerna/otp: RFC 6238
// codes with the parameters every authenticator app assumes (HMAC-SHA-1,
// six digits, 30-second steps) and 160-bit secrets.
package totp

import (
	"encoding/base32"
	"errors"
	"strings"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/hotp"
	ptotp "github.com/pquerna/otp/totp"

	"github.com/quitapix/quita/ports"
)

// Codes implements ports.OneTimeCodes.
type Codes struct{}

var _ ports.OneTimeCodes = Codes{}

// secretSize is the secret's length in bytes (RFC 4226 recommends 160 bits).
const secretSize = 20

// ErrSecret: a secret that is not base32.
var ErrSecret = errors.New("totp: the secret is not base32")

// NewTOTPSecret implements ports.OneTimeCodes.
func (Codes) NewTOTPSecret(issuer, account string) (string, string, error) {
	k, err := ptotp.Generate(ptotp.GenerateOpts{Issuer: issuer, AccountName: account, SecretSize: secretSize,
		Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return "", "", err
	}
	return k.Secret(), k.URL(), nil
}

// TOTPURI implements ports.OneTimeCodes.
func (Codes) TOTPURI(issuer, account, secret string) (string, error) {
	raw, err := decode(secret)
	if err != nil {
		return "", err
	}
	k, err := ptotp.Generate(ptotp.GenerateOpts{Issuer: issuer, AccountName: account, Secret: raw,
		Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		return "", err
	}
	return k.URL(), nil
}

// TOTPCode implements ports.OneTimeCodes: the HOTP code of the step's
// counter, which is what a TOTP code is (RFC 6238, section 4).
func (Codes) TOTPCode(secret string, step int64) (string, error) {
	if step < 0 {
		return "", errors.New("totp: negative step")
	}
	if _, err := decode(secret); err != nil {
		return "", err
	}
	return hotp.GenerateCodeCustom(secret, uint64(step), hotp.ValidateOpts{Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
}

func decode(secret string) ([]byte, error) {
	b, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(strings.TrimRight(secret, "=")))
	if err != nil || len(b) == 0 {
		return nil, ErrSecret
	}
	return b, nil
}
