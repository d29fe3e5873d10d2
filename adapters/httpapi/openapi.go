package httpapi

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/api"
)

// openAPIRoutes registers GET /v1/openapi.json, the API's OpenAPI 3.1
// document (api/openapi.yaml as JSON). It needs no authentication, so it is
// registered on the root router before the apikey-protected /v1 router.
// The document is converted, hashed and gzip-compressed once, when the
// handler is built; a request only picks one of the two precomputed
// bodies. Should the embedded document not convert, the route answers 500
// and api's tests fail.
func openAPIRoutes(r *mux.Router) {
	doc, err := api.JSON()
	var h http.Handler
	if err != nil {
		h = handle(func(http.ResponseWriter, *http.Request) (any, error) { return nil, err })
	} else {
		h = newStaticJSON(doc)
	}
	r.Handle("/v1/openapi.json", h).Methods(http.MethodGet).Name("openapi.document")
}

// staticJSON serves one JSON document that never changes while the
// process runs: as is, or gzip-compressed to a client that accepts gzip,
// each with its own strong ETag, and 304 to an If-None-Match naming the
// ETag of the representation the request would get.
type staticJSON struct {
	plain, gz         []byte
	plainTag, gzipTag string
}

func newStaticJSON(doc []byte) *staticJSON {
	sum := sha256.Sum256(doc)
	tag := hex.EncodeToString(sum[:16])
	s := &staticJSON{plain: doc, plainTag: `"` + tag + `"`, gzipTag: `"` + tag + `-gzip"`}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // a valid level: no error
	_, _ = zw.Write(doc)                                     // into memory: no error
	if zw.Close() == nil && buf.Len() < len(doc) {
		s.gz = buf.Bytes()
	}
	return s
}

func (s *staticJSON) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, tag := s.plain, s.plainTag
	h := w.Header()
	if s.gz != nil {
		h.Set("Vary", "Accept-Encoding")
		if acceptsGzip(r.Header.Values("Accept-Encoding")) {
			body, tag = s.gz, s.gzipTag
			h.Set("Content-Encoding", "gzip")
		}
	}
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("ETag", tag)
	h.Set("Cache-Control", "no-cache")
	if etagListed(r.Header.Values("If-None-Match"), tag) {
		h.Del("Content-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// acceptsGzip reads Accept-Encoding (RFC 9110 section 12.5.3): gzip, or
// x-gzip, or "*" without a gzip entry, with a q-value above zero.
func acceptsGzip(values []string) bool {
	star := false
	for _, v := range values {
		for item := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(item, ";")
			coding = strings.ToLower(strings.TrimSpace(coding))
			if coding != "gzip" && coding != "x-gzip" && coding != "*" {
				continue
			}
			ok := qAboveZero(params)
			if coding == "*" {
				star = ok
				continue
			}
			return ok
		}
	}
	return star
}

// qAboveZero reports whether the parameters of an Accept-Encoding item
// leave it acceptable: no q, or a q other than zero.
func qAboveZero(params string) bool {
	for p := range strings.SplitSeq(params, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err == nil && q > 0
		}
	}
	return true
}

// etagListed is If-None-Match's weak comparison (RFC 9110 section
// 13.1.2): "*", or an entity tag equal to tag once a W/ prefix is ignored.
func etagListed(values []string, tag string) bool {
	for _, v := range values {
		for t := range strings.SplitSeq(v, ",") {
			t = strings.TrimSpace(t)
			if t == "*" || strings.TrimPrefix(t, "W/") == tag {
				return true
			}
		}
	}
	return false
}
