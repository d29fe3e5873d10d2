package domain

import (
	"crypto/sha256"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
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

// RawIDLen is the length of a raw id made now: 35 characters of
// [a-z2-7]. The first 9 hold the time it was made, in milliseconds since
// the Unix epoch (45 bits, enough until the year 3085); the other 26 hold
// 130 bits from the random source. The alphabet is in byte order, so ids
// sort by the time they were made: a table keyed by them takes its new
// rows at the end of its index, where random keys would land on any page
// of it (docs/decisions.md, "Ids"). 35 is also the most the API Pix takes
// in an id of its own (a devolução's is the refund's raw id).
const RawIDLen = 35

// LegacyRawIDLen is the length of the raw ids made before RawIDLen's:
// 16 random bytes, 26 characters of the same alphabet in RFC 4648 order.
// Objects made then keep them, and every parser accepts both.
const LegacyRawIDLen = 26

// rawIDAlphabet is base32's alphabet, lower case, in byte order.
const rawIDAlphabet = "234567abcdefghijklmnopqrstuvwxyz"

// rawIDTimeLen is how many of a raw id's characters hold its time.
const rawIDTimeLen = 9

// NewRawID makes a raw id of the current time and 130 bits read from rnd
// (crypto/rand.Reader in production): NewRawIDAt.
func NewRawID(rnd io.Reader) (string, error) {
	return NewRawIDAt(time.Now(), rnd)
}

// NewRawIDAt makes a fixed-length, URL-safe raw id: the 45 low bits of
// at's Unix milliseconds, then 130 bits from rnd (17 bytes read, the last
// 6 bits unused), 5 bits a character.
func NewRawIDAt(at time.Time, rnd io.Reader) (string, error) {
	var b [17]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", fmt.Errorf("read random id: %w", err)
	}
	var out [RawIDLen]byte
	ms := uint64(at.UnixMilli())
	for j := rawIDTimeLen - 1; j >= 0; j-- {
		out[j], ms = rawIDAlphabet[ms&31], ms>>5
	}
	var acc uint64 // the bits read and not yet written are its n lowest
	n, i := 0, 0
	for j := rawIDTimeLen; j < RawIDLen; j++ {
		if n < 5 {
			acc, n, i = acc<<8|uint64(b[i]), n+8, i+1
		}
		n -= 5
		out[j] = rawIDAlphabet[acc>>n&31]
	}
	return string(out[:]), nil
}

// ValidRawID reports whether s has the shape of a raw id, either length.
func ValidRawID(s string) bool {
	if len(s) != RawIDLen && len(s) != LegacyRawIDLen {
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

// CobTxID is the txid of a cob asked for under raw, a fresh raw id (a
// create that skipped the replay check: app.ChargeService.Create): the
// first 9 characters of raw, which hold its time, then the first 23 of
// DeriveTxID("cob", raw). So these txids sort by the time they were made,
// as raw ids do, and the charges' txid index takes them at its end; the
// other 23 characters keep 118 bits of the hash. 32 characters of [a-z0-9]
// (the raw alphabet is a subset), never a charge id's length. A legacy raw
// id gets DeriveTxID's alone.
func CobTxID(raw string) string {
	derived := DeriveTxID("cob", raw)
	if len(raw) != RawIDLen {
		return derived
	}
	return raw[:rawIDTimeLen] + derived[:32-rawIDTimeLen]
}

// DeriveTxID derives a Pix txid from parts: a charge's from its
// idempotency scope when the create checked the database first (a retry
// then asks the acquirer for the same cob, which the API Pix defines as
// idempotent, PUT /cob/{txid}); one asked for under a fresh id per attempt
// takes its time first (CobTxID). The result is 32 characters of
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
