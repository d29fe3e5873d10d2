package domain

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Object id prefixes. A raw id is the part after the prefix.
const (
	PrefixCharge      = "ch_"
	PrefixTransaction = "tx_"
	PrefixRefund      = "re_"
	PrefixEndpoint    = "we_"
	PrefixDelivery    = "wd_"
	PrefixEvent       = "evt_"
	PrefixAPIKey      = "key_"
	PrefixAccount     = "acct_"
	PrefixUser        = "usr_"
	PrefixRequest     = "req_"
)

// RawIDLen is the length of every raw id: 16 random bytes (128 bits) in
// lower-case base32 without padding.
const RawIDLen = 26

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewRawID reads 128 bits from rnd (crypto/rand.Reader in production) and
// returns them as a fixed-length, URL-safe raw id.
func NewRawID(rnd io.Reader) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", fmt.Errorf("read random id: %w", err)
	}
	return idEncoding.EncodeToString(b[:]), nil
}

// ValidRawID reports whether s has the shape of a raw id.
func ValidRawID(s string) bool {
	if len(s) != RawIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '2' || c > '7') {
			return false
		}
	}
	return true
}

// ParseChargeID accepts the forms a merchant may hold — "ch_<raw>",
// "tx_<raw>" or the bare raw id — and returns the raw id.
func ParseChargeID(s string) (string, bool) {
	raw := s
	if r, ok := strings.CutPrefix(s, PrefixCharge); ok {
		raw = r
	} else if r, ok := strings.CutPrefix(s, PrefixTransaction); ok {
		raw = r
	}
	return raw, ValidRawID(raw)
}

// RefundSendID is the send id of the Pix a cashout refund sends (Efí's
// idEnvio, the sandbox's send id). It is derived from the refund, whose id
// the idempotent create fixes once for every retry of the request, so each
// start of the refund — a retry after a crash, another worker — names the
// same Pix and the PSP sends it once.
func RefundSendID(accountID, refundID string) string {
	return DeriveTxID("refund", accountID, refundID)
}

// DeriveTxID derives a Pix txid from parts: a charge's from its
// idempotency scope when the create checked the database first (a retry
// then asks the acquirer for the same cob, which the API Pix defines as
// idempotent, PUT /cob/{txid}), or from a random id per attempt when it
// did not (app.ChargeService.Create). The result is 32 characters of
// [a-z0-9], within the txid alphabet [a-zA-Z0-9]{26,35}, and never equals
// a charge id.
func DeriveTxID(parts ...string) string {
	// SHA-256 of each part as "len:part;" (the lengths keep ("ab","c")
	// and ("a","bc") apart), built on the stack: this runs on every
	// create.
	var stack [256]byte
	in := stack[:0]
	for _, p := range parts {
		in = strconv.AppendInt(in, int64(len(p)), 10)
		in = append(in, ':')
		in = append(in, p...)
		in = append(in, ';')
	}
	sum := sha256.Sum256(in)
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz"
	var out [32]byte
	for i := range out {
		out[i] = alphabet[int(sum[i])%len(alphabet)]
	}
	return string(out[:])
}
