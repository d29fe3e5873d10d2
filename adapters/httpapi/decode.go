package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/quitapix/quita/domain"
)

// maxBody bounds every request body.
const maxBody = 1 << 20

// readBody reads the whole body under the size limit. jsonOnly enforces
// the spec's Content-Type: application/json on financial writes; other
// routes take the body as JSON whatever the header says.
func readBody(w http.ResponseWriter, r *http.Request, jsonOnly bool) ([]byte, error) {
	return readBodyUpTo(w, r, jsonOnly, maxBody)
}

// readBodyUpTo is readBody for a route that takes bodies up to limit
// (limit ≥ maxBody).
func readBodyUpTo(w http.ResponseWriter, r *http.Request, jsonOnly bool, limit int64) ([]byte, error) {
	if jsonOnly {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			return nil, badRequest("Content-Type", "content_type_invalid", "send the body with Content-Type: application/json")
		}
	}
	if b, ok := r.Body.(*bufferedBody); ok {
		if body, ok := b.whole(); ok { // read ahead by the admission limiter
			return body, nil
		}
	}
	return io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
}

// readJSON reads the body (see readBody) and decodes it strictly into v,
// returning the raw bytes for the idempotency fingerprint.
func readJSON(w http.ResponseWriter, r *http.Request, jsonOnly bool, v any) ([]byte, error) {
	body, err := readBody(w, r, jsonOnly)
	if err != nil {
		return nil, err
	}
	return body, decodeStrict(body, v)
}

// decodeStrict decodes one JSON object into v, refusing unknown fields,
// wrong types and trailing data, and names the offending param.
func decodeStrict(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("", "body_missing", "the request needs a JSON body")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err, body, v)
	}
	if dec.More() {
		return badRequest("", "body_invalid", "the body must hold exactly one JSON object")
	}
	if bytes.Contains(body, []byte(`\u0000`)) && hasNUL(body) {
		return badRequest("", "body_invalid", "text in the body must not contain the NUL character (\\u0000)")
	}
	return nil
}

// hasNUL reports whether any string (key or value) of the JSON document
// holds U+0000, which neither database stores in text (Postgres refuses it;
// SQLite cuts the string).
func hasNUL(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if s, ok := tok.(string); ok && strings.IndexByte(s, 0) >= 0 {
			return true
		}
	}
}

func jsonError(err error, body []byte, v any) error {
	var (
		te *json.UnmarshalTypeError
		se *json.SyntaxError
		ve *domain.ValidationError
	)
	switch {
	case errors.As(err, &ve):
		return err // a field's own decoder refused it (metadataObject)
	case errors.As(err, &te):
		param := te.Field
		return badRequest(param, "parameter_invalid", fmt.Sprintf("%s must be %s", paramOr(param, "the body"), jsonKind(te.Type.Kind().String())))
	case errors.As(err, &se), errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("", "body_invalid", "the body is not valid JSON")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		param := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		// encoding/json names only the key; name where it sits ("customer.cpf").
		if p := unknownFieldPath(body, reflect.TypeOf(v), param); p != "" {
			param = p
		}
		return badRequest(param, "parameter_unknown", fmt.Sprintf("unknown field %s", param))
	}
	return badRequest("", "body_invalid", "the body could not be decoded")
}

// unknownFieldPath finds the dotted path of the first object key named
// field that type t does not declare, or "" when there is none. encoding/json
// names only the first unknown key it meets, in document order, so the
// body is read only up to it: a body of 60,000 unknown keys is not turned
// into a map to name the first.
func unknownFieldPath(body []byte, t reflect.Type, field string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return ""
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		key, _ := tok.(string)
		ft, known := structField(t, key)
		if !known && key == field {
			return key
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return ""
		}
		if known {
			if p := unknownFieldPath(val, ft, field); p != "" {
				return key + "." + p
			}
		}
	}
	return ""
}

// structField is the type of the field key decodes into (encoding/json
// matches names case-insensitively).
func structField(t reflect.Type, key string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			if ft, ok := structField(f.Type, key); ok { // promoted fields
				return ft, true
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if name != "-" && strings.EqualFold(name, key) {
			return f.Type, true
		}
	}
	return nil, false
}

func paramOr(p, fallback string) string {
	if p == "" {
		return fallback
	}
	return p
}

func jsonKind(kind string) string {
	switch kind {
	case "int64", "int", "int32":
		return "an integer"
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "map", "struct":
		return "an object"
	case "slice":
		return "an array"
	case "ptr":
		return "of another type"
	}
	return "of another type"
}

// noBody refuses a body with fields on an action that takes none, as an
// unknown field anywhere else is refused: a merchant sending
// {"reason": ...} to cancel must not believe it was kept. An absent body
// and {} are accepted.
func noBody(w http.ResponseWriter, r *http.Request) error {
	return optionalBody(w, r, &struct{}{})
}

// intParam reads an integer query parameter from lo to hi; def when absent.
func intParam(v string, param string, lo, hi, def int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, badRequest(param, "parameter_invalid", param+" must be an integer from "+strconv.Itoa(lo)+" to "+strconv.Itoa(hi))
	}
	return n, nil
}

// fingerprint identifies a request for idempotency: SHA-256 over method,
// path and the body re-encoded canonically (object keys sorted, no
// insignificant white space), so formatting changes are the same request.
func fingerprint(method, path string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(method + " " + path + "\n"))
	if canon, ok := canonicalJSON(body); ok {
		h.Write(canon)
	} else {
		h.Write(body)
	}
	return hex.EncodeToString(h.Sum(nil))
}
