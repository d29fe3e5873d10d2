package domain

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"
)

// Limits of a metadata object (security.md, items 6 and 10).
const (
	// MaxMetadataValueLen bounds a string value in characters, and any
	// other value in bytes of its JSON text.
	MaxMetadataValueLen = 500
	// MaxMetadataBytes bounds the whole object: keys plus values' JSON text.
	MaxMetadataBytes = 8 << 10
)

// checkMetadataValue accepts what every store can keep and every reader
// can decode: no number outside float64's range (1e999999), no lone UTF-16
// surrogate or NUL escape in a string, nothing longer than the limits. It
// returns the bytes the value counts against MaxMetadataBytes. The error
// never quotes the value: metadata may carry personal data.
func checkMetadataValue(key string, v any) (int, error) {
	raw, ok := v.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			return 0, Invalid(FieldMetadata, "%s value of %q is not representable as JSON", FieldMetadata, key)
		}
		raw = b
	}
	if err := checkJSONText(raw); err != nil {
		return 0, Invalid(FieldMetadata, "%s value of %q %s", FieldMetadata, key, err.Error())
	}
	if s, isString := MetadataString(raw); isString {
		if utf8.RuneCountInString(s) > MaxMetadataValueLen {
			return 0, Invalid(FieldMetadata, "%s values must be at most %d characters", FieldMetadata, MaxMetadataValueLen)
		}
	} else if len(raw) > MaxMetadataValueLen {
		return 0, Invalid(FieldMetadata, "%s values must be at most %d characters of JSON", FieldMetadata, MaxMetadataValueLen)
	}
	return len(key) + len(raw), nil
}

// metadataTextError says what is wrong with a metadata value's JSON text.
type metadataTextError string

func (e metadataTextError) Error() string { return string(e) }

// checkJSONText checks JSON text that encoding/json already accepted for
// what it lets through but databases refuse: numbers beyond float64 and
// \u escapes of NUL or of an unpaired surrogate; and for what would
// change how it displays: a control or bidirectional formatting character
// in any string, key or value, at any depth (strings may hold tabs and
// line breaks).
func checkJSONText(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			break // the end, or text the request decoder already refused
		}
		switch v := tok.(type) {
		case json.Number:
			if f, err := strconv.ParseFloat(string(v), 64); err != nil || math.IsInf(f, 0) {
				return metadataTextError("holds a number out of range")
			}
		case string:
			if HasTextControl(v, true) {
				return metadataTextError("holds a control or bidirectional formatting character")
			}
		}
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // a two-character escape such as \\ or \"
			continue
		}
		r, ok := hex4(raw, i+2)
		switch {
		case !ok:
			return metadataTextError("holds a malformed escape")
		case r == 0:
			return metadataTextError(`holds a NUL character (\u0000)`)
		case r >= 0xDC00 && r <= 0xDFFF:
			return metadataTextError("holds an unpaired UTF-16 surrogate")
		case r >= 0xD800 && r <= 0xDBFF:
			var lo rune
			ok := i+11 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u'
			if ok {
				lo, ok = hex4(raw, i+8)
			}
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return metadataTextError("holds an unpaired UTF-16 surrogate")
			}
			i += 11
			continue
		}
		i += 5
	}
	return nil
}

// hex4 reads the four hex digits at raw[at:].
func hex4(raw []byte, at int) (rune, bool) {
	if at+4 > len(raw) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(raw[at:at+4]), 16, 32)
	return rune(n), err == nil
}
