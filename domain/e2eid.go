package domain

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// Layout of a Pix end-to-end id (BCB, Manual de Padrões para Iniciação do
// Pix): "E", the 8-digit ISPB of the payer's institution, the UTC minute it
// was created as yyyyMMddHHmm, and 11 alphanumerics unique within that
// minute.
const (
	e2eLen        = 32
	e2eISPBLen    = 8
	e2eTimeLayout = "200601021504"
	e2eSuffixLen  = 11
	e2eAlphabet   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
)

// NewEndToEndID returns a fresh end-to-end id for a Pix sent by the
// institution ispb at time at (converted to UTC, as the format requires).
// Quita needs one when it is the paying side, as in the sandbox acquirer and
// refunds sent by cashout. The suffix is drawn from rnd, crypto/rand.Reader
// in production, uniformly over [A-Za-z0-9] so collisions within a minute
// stay as unlikely as 65 bits allow.
func NewEndToEndID(ispb string, at time.Time, rnd io.Reader) (string, error) {
	if len(ispb) != e2eISPBLen || !allDigits(ispb) {
		return "", fmt.Errorf("end-to-end id: ISPB %q is not 8 digits", ispb)
	}
	if rnd == nil {
		return "", errors.New("end-to-end id: no random source")
	}
	stamp := at.UTC().Format(e2eTimeLayout)
	if len(stamp) != len(e2eTimeLayout) || !allDigits(stamp) {
		return "", fmt.Errorf("end-to-end id: year of %v is not between 0000 and 9999", at)
	}
	suffix := make([]byte, 0, e2eSuffixLen)
	var buf [32]byte
	for len(suffix) < e2eSuffixLen {
		if _, err := io.ReadFull(rnd, buf[:]); err != nil {
			return "", fmt.Errorf("end-to-end id: read random: %w", err)
		}
		for _, c := range buf {
			// 62*4 = 248: dropping 248..255 keeps every character equally likely.
			if c < 248 && len(suffix) < e2eSuffixLen {
				suffix = append(suffix, e2eAlphabet[c%62])
			}
		}
	}
	return "E" + ispb + stamp + string(suffix), nil
}

// EndToEndISPB returns the ISPB of the payer's institution that an
// end-to-end id carries, and whether s is a valid end-to-end id at all.
func EndToEndISPB(s string) (string, bool) {
	if !ValidEndToEndID(s) {
		return "", false
	}
	return s[1 : 1+e2eISPBLen], true
}

// ValidEndToEndID reports whether s has the shape of a Pix end-to-end id,
// including a real calendar minute. Acquirer notifications are matched and
// deduplicated by this id, so a malformed one is refused at the edge.
func ValidEndToEndID(s string) bool {
	if len(s) != e2eLen || s[0] != 'E' {
		return false
	}
	ispb := s[1 : 1+e2eISPBLen]
	stamp := s[1+e2eISPBLen : 1+e2eISPBLen+len(e2eTimeLayout)]
	suffix := s[e2eLen-e2eSuffixLen:]
	if !allDigits(ispb) || !allDigits(stamp) {
		return false
	}
	if _, err := time.Parse(e2eTimeLayout, stamp); err != nil {
		return false
	}
	for i := 0; i < len(suffix); i++ {
		if !isAlnum(suffix[i]) {
			return false
		}
	}
	return true
}

// ValidTxID reports whether s is a txid the API Pix accepts for a charge
// (cob): 26 to 35 ASCII letters and digits. PSPs reject anything else, so
// checking here turns a remote 400 into a local error.
func ValidTxID(s string) bool {
	if len(s) < 26 || len(s) > 35 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isAlnum(s[i]) {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
