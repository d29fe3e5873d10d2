package httpapi

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/quitapix/quita/app"
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

// keyedRequest is a payments-surface request body that carries its own
// idempotencyKey field.
type keyedRequest interface{ idempotencyKey() string }

func (r *createPaymentRequest) idempotencyKey() string { return r.IdempotencyKey }
func (r *refundRequest) idempotencyKey() string        { return r.IdempotencyKey }

// readKeyedJSON reads a financial write of the payments surface: the body
// strictly into v, then its idempotencyKey under the one rule, and returns
// the key with the request's fingerprint.
func readKeyedJSON(w http.ResponseWriter, r *http.Request, v keyedRequest) (app.Idempotency, error) {
	body, err := readJSON(w, r, true, v)
	if err != nil {
		return app.Idempotency{}, err
	}
	key, err := checkIdempotencyKey("idempotencyKey", v.idempotencyKey())
	if err != nil {
		return app.Idempotency{}, err
	}
	return app.Idempotency{Key: key, Fingerprint: fingerprint(r.Method, r.URL.Path, body)}, nil
}
