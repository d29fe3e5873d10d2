package httpapi

import (
	"strings"
	"unicode/utf8"
)

// checkIdempotencyKey is the one rule for an idempotency key, whichever wire
// format carries it: the Idempotency-Key header (charges surface) or the
// idempotencyKey body field (payments surface); param names it as sent.
// A key is 8 to 128 characters of valid UTF-8 without NUL: the header can
// carry any bytes, and neither database stores NUL in text.
func checkIdempotencyKey(param, key string) (string, error) {
	if key == "" {
		return "", badRequest(param, "idempotency_key_missing",
			"financial writes need "+param+" (8 to 128 characters)")
	}
	if n := utf8.RuneCountInString(key); n < 8 || n > 128 || !utf8.ValidString(key) || strings.IndexByte(key, 0) >= 0 {
		return "", badRequest(param, "idempotency_key_invalid",
			param+" must be 8 to 128 characters of valid UTF-8")
	}
	return key, nil
}
