package httpapi

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/quitapix/quita/app"
)

// idempotencyHeader carries the key of a write on the charges surface,
// and on the payments surface instead of (or with) its body field.
const idempotencyHeader = "Idempotency-Key"

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

// keyedRequest is a payments-surface request body that carries its own
// idempotencyKey field.
type keyedRequest interface{ idempotencyKey() string }

func (r *createPaymentRequest) idempotencyKey() string { return r.IdempotencyKey }
func (r *refundRequest) idempotencyKey() string        { return r.IdempotencyKey }

// readKeyedJSON reads a financial write of the payments surface: the body
// strictly into v, then its key under the one rule, and returns the key
// with the request's fingerprint. The key is the body's idempotencyKey or
// the Idempotency-Key header, as the charges surface takes it; both sent
// must be equal (400 idempotency_key_mismatch), so a retry never names
// two writes.
func readKeyedJSON(w http.ResponseWriter, r *http.Request, v keyedRequest) (app.Idempotency, error) {
	body, err := readJSON(w, r, true, v)
	if err != nil {
		return app.Idempotency{}, err
	}
	param, key := "idempotencyKey", v.idempotencyKey()
	switch header := r.Header.Get(idempotencyHeader); {
	case header == "":
	case key == "":
		param, key = idempotencyHeader, header
	case key != header:
		return app.Idempotency{}, badRequest(idempotencyHeader, "idempotency_key_mismatch",
			"the Idempotency-Key header and the idempotencyKey field name different keys: send one, or the same in both")
	}
	key, err = checkIdempotencyKey(param, key)
	if err != nil {
		return app.Idempotency{}, err
	}
	return app.Idempotency{Key: key, Fingerprint: fingerprint(r.Method, r.URL.Path, body)}, nil
}
