package brcode

import (
	"errors"
	"fmt"
	"strings"
)

// ErrMalformed is returned when a BR Code, or the fields a BR Code is
// to be built from, break the EMV MPM layout or the Banco Central's Pix
// profile of it. Payer apps reject such codes, so Quita never emits one and
// refuses to trust one it reads. The wrapped message names the offending tag.
var ErrMalformed = errors.New("malformed BR Code")

// ErrChecksum is returned when a BR Code is well formed but its CRC
// (tag 63) does not match its content: the code was mistyped, truncated or
// altered after it was issued, and paying it could credit the wrong party.
var ErrChecksum = errors.New("BR Code checksum mismatch")

// gui identifies the Pix arrangement inside merchant account template 26.
const gui = "br.gov.bcb.pix"

// Limits from the BCB profile. The amount limit comes from tag 54 holding at
// most 13 characters ("9999999999.99").
const (
	maxName      = 25
	maxCity      = 15
	maxTxID      = 25
	maxAmount    = 999_999_999_999
	maxValue     = 99
	maxAmountLen = 13
)

// Point-of-initiation values (tag 01). Pix uses 12 for codes that must be
// paid at most once; 11 says the code may be reused.
const (
	reusable  = "11"
	singleUse = "12"
)

// TLV is one EMV data object kept verbatim: a two-digit tag and its value.
// Quita carries tags it does not interpret (Pix Automático's 80, other
// arrangements' 27..51, unreserved 80..99) so that re-encoding a code read
// from elsewhere does not silently drop what another party put there.
type TLV struct {
	Tag   string
	Value string
}

// Code is a Pix "copia e cola" payload decoded into the fields the BCB
// profile gives meaning to. A code is either static (Key set: the payer's
// app pays the key directly) or dynamic (Location set: the app fetches the
// charge from the PSP at that URL), never both.
//
// Lengths are counted in bytes, the way Go and most PSPs count them; Encode
// keeps the merchant name and city to printable ASCII, where bytes and
// characters agree, because payer apps disagree on how to count the rest.
type Code struct {
	// PointOfInitiation is tag 01: "12" makes payer apps refuse a second
	// payment of the same code, "11" allows reuse, "" omits the tag (the
	// usual choice for static codes).
	PointOfInitiation string

	// Key is the Pix key (26/01) a static code pays.
	Key string
	// Info is free text shown to the payer (26/02), static codes only by
	// convention; "" omits it.
	Info string
	// Location is the PSP URL of a dynamic code (26/25), without "https://":
	// payer apps add the scheme themselves.
	Location string
	// AccountExtra holds sub-tags of template 26 that Quita does not
	// interpret, in the order they were read.
	AccountExtra []TLV

	// MerchantCategoryCode is tag 52; Pix normally carries "0000" and ""
	// encodes as "0000".
	MerchantCategoryCode string

	// Amount is tag 54 in centavos; 0 leaves it out so the payer types the
	// amount.
	Amount int64

	// MerchantName (59) and MerchantCity (60) are what the payer sees before
	// confirming. Encode strips accents and truncates them to 25 and 15
	// characters because longer or non-ASCII values break some payer apps.
	MerchantName string
	MerchantCity string

	// TxID is 62/05, the reconciliation id of a static code. "" encodes as
	// "***", the BCB's marker for "no txid" (always the case for dynamic
	// codes, whose txid lives behind Location), and "***" decodes as "".
	TxID string
	// AdditionalDataExtra holds sub-tags of template 62 other than 05.
	AdditionalDataExtra []TLV

	// Extra holds top-level tags Quita does not interpret, in order. They
	// are written after tag 62 and before the CRC.
	Extra []TLV
}

// knownTags are the top-level tags that Code models as fields; Extra
// must not repeat them or the encoded code would carry a tag twice.
var knownTags = map[string]bool{
	"00": true, "01": true, "26": true, "52": true, "53": true, "54": true,
	"58": true, "59": true, "60": true, "62": true, "63": true,
}

// CRC16CCITT returns the CRC-16/CCITT-FALSE checksum (polynomial 0x1021,
// initial value 0xFFFF, no reflection, no final xor) that EMV MPM puts in
// tag 63 so payer apps can catch a mistyped or truncated code.
func CRC16CCITT(data []byte) uint16 {
	crc := uint16(0xFFFF)
	for _, b := range data {
		crc = crc<<8 ^ crcTable[byte(crc>>8)^b]
	}
	return crc
}

// crcTable holds, for each value of the register's high byte xored with
// the next input byte, what shifting those eight bits through the
// polynomial contributes: one lookup per byte instead of eight steps
// (every create encodes a code, every payment notification parses one).
var crcTable = func() (t [256]uint16) {
	for i := range t {
		crc := uint16(i) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		t[i] = crc
	}
	return t
}()

// checksum formats the checksum of payload (which must end in "6304") the
// way tag 63 carries it.
func checksum(payload string) string {
	const hex = "0123456789ABCDEF"
	c := CRC16CCITT([]byte(payload))
	return string([]byte{hex[c>>12&0xf], hex[c>>8&0xf], hex[c>>4&0xf], hex[c&0xf]})
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// NewDynamic builds the code for a charge the PSP serves at location,
// the usual Quita case: single use (01 = "12"), no amount in the code (the
// payer's app reads it from the PSP), txid "***". A leading "https://" or
// "http://" is removed because the BCB profile carries the URL without one.
func NewDynamic(location, merchantName, merchantCity string) (string, error) {
	for _, scheme := range []string{"https://", "http://"} {
		if len(location) >= len(scheme) && strings.EqualFold(location[:len(scheme)], scheme) {
			location = location[len(scheme):]
			break
		}
	}
	if location == "" {
		return "", malformed("dynamic code needs a location")
	}
	b := Code{
		PointOfInitiation: singleUse,
		Location:          location,
		MerchantName:      merchantName,
		MerchantCity:      merchantCity,
	}
	return b.Encode()
}

// NewStatic builds a reusable code that pays key directly. amount is
// in centavos (0 lets the payer choose); info is shown to the payer; txid
// "" becomes "***", which means the merchant will reconcile by other means.
func NewStatic(key, info string, amount int64, merchantName, merchantCity, txid string) (string, error) {
	if key == "" {
		return "", malformed("static code needs a Pix key")
	}
	b := Code{
		Key:          key,
		Info:         info,
		Amount:       amount,
		MerchantName: merchantName,
		MerchantCity: merchantCity,
		TxID:         txid,
	}
	return b.Encode()
}
