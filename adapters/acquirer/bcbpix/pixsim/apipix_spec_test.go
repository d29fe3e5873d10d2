package pixsim_test

// The check of pixsim against the official API Pix OpenAPI document
// (github.com/bacen/pix-api, openapi.yaml, 2.9): a transport validates every
// Pix Automático request a test sends (the operations tagged Rec,
// SolicRec, CobR, PayloadLocationRec, RecPayload, WebhookRec, WebhookCobR)
// and every answer pixsim gives with kin-openapi's openapi3filter, and
// webhook callbacks are validated against the callbacks' request bodies. The document is not copied into this
// repository: it is read from $PIXSIM_API_PIX_OPENAPI (a file) or from a
// clone of bacen/pix-api at $PIXSIM_API_PIX_REPO (default
// /work/.mirror/bacen+pix-api/repo, `git show HEAD:openapi.yaml`); without
// either the tests that need it skip.
//
// The rules:
//   - a request the document calls invalid must be refused with a 4xx the
//     operation documents; a valid one may get any documented status;
//   - every answer must use a documented status and match its schema,
//     except the 400 XxxConsultaInvalida answers that the document's error
//     catalogue gives to GET /rec, /rec/{idRec}, /cobr and /locrec without
//     listing 400 among those operations' responses: they must match
//     Problema;
//   - a payload location (GET /rec/{recUrlAccessToken}) answers a JWS whose
//     payload is checked against RecPayload.
//
// The 2.9 document cannot be satisfied as written in a few places;
// errata (and specErrata) list each correction the check applies, and why.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

type apiPix struct {
	doc *openapi3.T
	err error
}

var loadAPIPix = sync.OnceValue(func() *apiPix {
	raw, err := readAPIPix()
	if err != nil {
		return &apiPix{err: err}
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		return &apiPix{err: fmt.Errorf("load the API Pix document: %w", err)}
	}
	if err := specErrata(doc); err != nil {
		return &apiPix{err: err}
	}
	openapi3filter.RegisterBodyDecoder("application/jose", joseDecoder)
	return &apiPix{doc: doc}
})

func readAPIPix() ([]byte, error) {
	if f := os.Getenv("PIXSIM_API_PIX_OPENAPI"); f != "" {
		return os.ReadFile(f)
	}
	repo := os.Getenv("PIXSIM_API_PIX_REPO")
	if repo == "" {
		repo = "/work/.mirror/bacen+pix-api/repo"
	}
	out, err := exec.Command("git", "-C", repo, "show", "HEAD:openapi.yaml").Output()
	if err != nil {
		return nil, fmt.Errorf("no API Pix document (set PIXSIM_API_PIX_OPENAPI or PIXSIM_API_PIX_REPO): %w", err)
	}
	return out, nil
}

// requireAPIPix is the document, or skips the test when it is not at hand.
func requireAPIPix(t *testing.T) *openapi3.T {
	t.Helper()
	a := loadAPIPix()
	if a.err != nil {
		t.Skip(a.err)
	}
	return a.doc
}

// joseDecoder reads a compact JWS and yields its payload as JSON.
func joseDecoder(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	raw, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	parts := strings.Split(string(raw), ".")
	if len(parts) != 3 {
		return nil, errors.New("not a compact JWS")
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return nil, err
	}
	var v any
	return v, json.Unmarshal(payload, &v)
}

// visitSchemas calls f once on every schema the document holds.
func visitSchemas(doc *openapi3.T, f func(*openapi3.Schema)) {
	seen := map[*openapi3.Schema]bool{}
	var visit func(*openapi3.SchemaRef)
	visit = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		seen[ref.Value] = true
		f(ref.Value)
		for _, p := range ref.Value.Properties {
			visit(p)
		}
		visit(ref.Value.Items)
		visit(ref.Value.AdditionalProperties.Schema)
		visit(ref.Value.Not)
		for _, l := range []openapi3.SchemaRefs{ref.Value.AllOf, ref.Value.AnyOf, ref.Value.OneOf} {
			for _, x := range l {
				visit(x)
			}
		}
	}
	for _, s := range doc.Components.Schemas {
		visit(s)
	}
	for _, p := range doc.Components.Parameters {
		visit(p.Value.Schema)
	}
	for _, item := range doc.Paths.Map() {
		for _, p := range item.Parameters {
			visit(p.Value.Schema)
		}
		for _, op := range item.Operations() {
			for _, p := range op.Parameters {
				visit(p.Value.Schema)
			}
		}
	}
}

// payloadPaths are the paths served at a payload location rather than
// under the API's base.
var payloadPaths = map[string]bool{"/{pixUrlAccessToken}": true, "/cobv/{pixUrlAccessToken}": true, "/rec/{recUrlAccessToken}": true}

// routeOf finds the operation of a request pixsim served at path: under
// /qr/v2 the payload locations, elsewhere the API; a template with more
// literal segments wins.
func routeOf(doc *openapi3.T, method, path string) (*routers.Route, map[string]string) {
	payload := false
	if p, ok := strings.CutPrefix(path, "/qr/v2"); ok {
		path, payload = p, true
	}
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var best *routers.Route
	var bestParams map[string]string
	bestLiterals := -1
	for tmpl, item := range doc.Paths.Map() {
		op := item.GetOperation(method)
		if op == nil || payloadPaths[tmpl] != payload {
			continue
		}
		tsegs := strings.Split(strings.Trim(tmpl, "/"), "/")
		if len(tsegs) != len(segs) {
			continue
		}
		params, literals, ok := map[string]string{}, 0, true
		for i, ts := range tsegs {
			switch {
			case strings.HasPrefix(ts, "{"):
				params[strings.Trim(ts, "{}")] = segs[i]
			case ts == segs[i]:
				literals++
			default:
				ok = false
			}
		}
		if ok && literals > bestLiterals {
			best = &routers.Route{Spec: doc, Path: tmpl, PathItem: item, Method: method, Operation: op}
			bestParams, bestLiterals = params, literals
		}
	}
	return best, bestParams
}

// checkedTags are the tags of the operations the transport checks.
var checkedTags = []string{"Rec", "SolicRec", "CobR", "PayloadLocationRec", "RecPayload", "WebhookRec", "WebhookCobR"}

// catalogue400 are operations the error catalogue gives a 400 that their
// responses do not list.
var catalogue400 = map[string]bool{"GET /rec": true, "GET /rec/{idRec}": true, "GET /cobr": true, "GET /locrec": true}

// specCheck is an http.RoundTripper that validates each exchange.
type specCheck struct {
	t    *testing.T
	doc  *openapi3.T
	base http.RoundTripper

	mu       sync.Mutex
	problems []string
	// seen counts answers per operation and status ("POST /rec 201").
	seen map[string]int
}

func newSpecCheck(t *testing.T) *specCheck {
	return &specCheck{t: t, doc: requireAPIPix(t), base: http.DefaultTransport, seen: map[string]int{}}
}

func (c *specCheck) fail(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// bearerPresent checks only that a token is sent: pixsim decides whether
// it is valid.
func bearerPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	if !strings.HasPrefix(in.RequestValidationInput.Request.Header.Get("Authorization"), "Bearer ") {
		return errors.New("no Bearer token")
	}
	return nil
}

func (c *specCheck) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.HasPrefix(req.URL.Path, "/_sim/") || req.URL.Path == "/oauth/token" {
		return c.base.RoundTrip(req)
	}
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	name := req.Method + " " + req.URL.Path
	route, params := routeOf(c.doc, req.Method, req.URL.Path)
	if route != nil && !slices.ContainsFunc(route.Operation.Tags, func(tag string) bool { return slices.Contains(checkedTags, tag) }) {
		return c.base.RoundTrip(req)
	}
	var in *openapi3filter.RequestValidationInput
	var reqErr error
	if route == nil {
		c.fail("%s: no operation of the document", name)
	} else {
		name = req.Method + " " + route.Path
		check := req.Clone(req.Context())
		check.Body = io.NopCloser(bytes.NewReader(body))
		in = &openapi3filter.RequestValidationInput{Request: check, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: bearerPresent, MultiError: true, SkipSettingDefaults: true}}
		reqErr = openapi3filter.ValidateRequest(req.Context(), in)
	}
	resp, err := c.base.RoundTrip(req)
	if err != nil || route == nil {
		return resp, err
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	c.mu.Lock()
	c.seen[fmt.Sprintf("%s %d", name, resp.StatusCode)]++
	c.mu.Unlock()
	if reqErr != nil && (resp.StatusCode < 400 || resp.StatusCode >= 500) {
		c.fail("%s: the document calls the request invalid (%v) but pixsim answered %d", name, reqErr, resp.StatusCode)
	}
	if _, declared := route.Operation.Responses.Map()[fmt.Sprint(resp.StatusCode)]; !declared && resp.StatusCode == 400 && catalogue400[name] {
		c.checkProblem(name, resp.Header, raw)
		return resp, nil
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
	out.SetBodyBytes(raw)
	if err := openapi3filter.ValidateResponse(req.Context(), out); err != nil {
		c.fail("%s → %d: %v\n%s", name, resp.StatusCode, err, raw)
	}
	return resp, nil
}

// checkProblem validates an answer against the Problema schema.
func (c *specCheck) checkProblem(name string, h http.Header, raw []byte) {
	if ct := h.Get("Content-Type"); ct != "application/problem+json" {
		c.fail("%s → 400: Content-Type %q", name, ct)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		c.fail("%s → 400: %v", name, err)
		return
	}
	if err := c.doc.Components.Schemas["Problema"].Value.VisitJSON(v); err != nil {
		c.fail("%s → 400: %v", name, err)
	}
}

// checkCallback validates a callback body against the request body of the
// callback the webhook operation (PUT /webhookrec or /webhookcobr) names.
func (c *specCheck) checkCallback(hookPath, callback string, body []byte) {
	op := c.doc.Paths.Value(hookPath).Put
	var item *openapi3.PathItem
	if cb := op.Callbacks[callback]; cb != nil && cb.Value != nil {
		for _, it := range cb.Value.Map() {
			item = it
		}
	}
	if item == nil || item.Post == nil {
		c.fail("%s: no callback %s in the document", hookPath, callback)
		return
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		c.fail("callback %s: %v", callback, err)
		return
	}
	schema := item.Post.RequestBody.Value.Content.Get("application/json").Schema
	if err := schema.Value.VisitJSON(v); err != nil {
		c.fail("callback %s: %v\n%s", callback, err, body)
	}
}

// report fails the test with every mismatch seen.
func (c *specCheck) report() {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.problems {
		c.t.Error(p)
	}
}
