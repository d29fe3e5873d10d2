package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/quitapix/quita/api"
)

// The contract check: every request the suite sends through httpClient and
// every answer it gets are validated against api/openapi.yaml with
// kin-openapi's openapi3filter, so the document cannot drift from the
// server. A mismatch makes the round trip fail (the calling test fails on
// the transport error) and is also recorded for TestMain, which fails the
// run when any was seen (a goroutine might ignore its error).
//
// The rules:
//   - a request under /v1 must match a documented operation, or be answered
//     as an unknown route (below), in the error envelope;
//   - a request the document calls invalid (a negative test) must be
//     refused with a documented 4xx; a valid one may get any documented
//     status;
//   - every answer must use a status the operation documents, carry the
//     documented headers and a body matching the documented schema; an
//     error's request_id must equal its X-Request-Id. For the
//     check, every documented object is closed (additionalProperties: false
//     unless the document says otherwise), so an undocumented field fails
//     too; the published document leaves answers open for forward
//     compatibility.
//
// Requests outside /v1 (the checkout pages, /healthz, /readyz) are not part
// of the document and are not checked.
//
// An unknown path or method may only be answered 404 route_not_found or 405
// method_not_allowed, or 400 when its path or query holds text no database
// can store (NUL, invalid UTF-8), which the server refuses before routing.

type contractChecker struct {
	doc    *openapi3.T
	router routers.Router
	errEnv *openapi3.Schema

	mu       sync.Mutex
	problems []string
	checked  int
	// seen counts the answers per operation and status ("getCharge 200").
	seen map[string]int
	// spent is the time the checks took, summed over every exchange.
	spent time.Duration
}

var contract = sync.OnceValues(newContractChecker)

// defineFormats makes the check enforce format: email, which JSON Schema
// 2020-12 treats as an annotation, with kin-openapi's loose pattern: an
// address that fails it must be refused by the server.
var defineFormats = sync.OnceFunc(func() {
	openapi3.DefineStringFormatValidator("email", openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForEmail))
})

func newContractChecker() (*contractChecker, error) {
	defineFormats()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(api.YAML)
	if err != nil {
		return nil, fmt.Errorf("load api/openapi.yaml: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("api/openapi.yaml: %w", err)
	}
	closeObjects(doc)
	// Match any host: the servers differ per test.
	doc.Servers = openapi3.Servers{{URL: "/v1"}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("router: %w", err)
	}
	return &contractChecker{doc: doc, router: router, errEnv: doc.Components.Schemas["Error"].Value, seen: map[string]int{}}, nil
}

// closeObjects sets additionalProperties: false on every schema that lists
// properties and says nothing about others.
func closeObjects(doc *openapi3.T) {
	seen := map[*openapi3.Schema]bool{}
	var visit func(*openapi3.SchemaRef)
	visit = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		if len(s.Properties) > 0 && s.AdditionalProperties.Has == nil && s.AdditionalProperties.Schema == nil {
			no := false
			s.AdditionalProperties.Has = &no
		}
		for _, p := range s.Properties {
			visit(p)
		}
		visit(s.Items)
		visit(s.AdditionalProperties.Schema)
		for _, l := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
			for _, x := range l {
				visit(x)
			}
		}
	}
	for _, s := range doc.Components.Schemas {
		visit(s)
	}
	content := func(c openapi3.Content) {
		for _, mt := range c {
			visit(mt.Schema)
		}
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				content(op.RequestBody.Value.Content)
			}
			for _, r := range op.Responses.Map() {
				if r.Value != nil {
					content(r.Value.Content)
				}
			}
		}
	}
	for _, r := range doc.Components.Responses {
		content(r.Value.Content)
	}
}

func (c *contractChecker) fail(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	c.mu.Lock()
	c.problems = append(c.problems, msg)
	c.mu.Unlock()
	return errors.New("openapi contract: " + msg)
}

// report returns every mismatch seen so far, each once, with the number
// of exchanges checked and the time the checks took.
func (c *contractChecker) report() (checked int, spent time.Duration, problems []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[string]bool{}
	for _, p := range c.problems {
		if !seen[p] {
			seen[p] = true
			problems = append(problems, p)
		}
	}
	sort.Strings(problems)
	return c.checked, c.spent, problems
}

// coverage lists the operations and statuses answered so far.
func (c *contractChecker) coverage() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.seen))
	for k, n := range c.seen {
		out = append(out, fmt.Sprintf("%s ×%d", k, n))
	}
	sort.Strings(out)
	return out
}

// authenticate checks only that the credential the scheme names is present:
// the server decides whether it is valid.
func authenticate(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	h := in.RequestValidationInput.Request.Header
	switch in.SecuritySchemeName {
	case "apikey":
		if h.Get("apikey") == "" {
			return errors.New("no apikey header")
		}
	case "dashboard":
		scheme, token, ok := strings.Cut(h.Get("Authorization"), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
			return errors.New("no Bearer token")
		}
	default:
		return fmt.Errorf("unknown security scheme %q", in.SecuritySchemeName)
	}
	return nil
}

func (c *contractChecker) options() *openapi3filter.Options {
	return &openapi3filter.Options{
		AuthenticationFunc:                authenticate,
		IncludeResponseStatus:             true,
		SkipSettingDefaults:               true,
		RejectWhenRequestBodyNotSpecified: true,
		MultiError:                        true,
	}
}

// check validates one exchange; body and respBody are the bytes sent and
// received.
func (c *contractChecker) check(req *http.Request, body []byte, resp *http.Response, respBody []byte) error {
	if req.URL.Path != "/v1" && !strings.HasPrefix(req.URL.Path, "/v1/") {
		return nil
	}
	start := time.Now()
	defer func() {
		c.mu.Lock()
		c.spent += time.Since(start)
		c.mu.Unlock()
	}()
	c.mu.Lock()
	c.checked++
	c.mu.Unlock()
	what := req.Method + " " + templatePath(req.URL)
	// A copy for the validator, which reads (and may rewrite) the body.
	vreq := req.Clone(context.Background())
	vreq.Body = io.NopCloser(bytes.NewReader(body))
	route, pathParams, err := c.router.FindRoute(vreq)
	if err != nil {
		return c.undocumented(what, err, resp, respBody)
	}
	c.mu.Lock()
	c.seen[fmt.Sprintf("%s %d", route.Operation.OperationID, resp.StatusCode)]++
	c.mu.Unlock()
	opts := c.options()
	in := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: pathParams, Route: route, Options: opts}
	reqErr := openapi3filter.ValidateRequest(context.Background(), in)
	if reqErr != nil && resp.StatusCode < 400 {
		return c.fail("%s: the server answered %d to a request the document refuses: %s", what, resp.StatusCode, oneLine(reqErr))
	}
	if reqErr != nil && resp.StatusCode >= 500 {
		return c.fail("%s: a request the document refuses got %d: %s", what, resp.StatusCode, oneLine(reqErr))
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Body: io.NopCloser(bytes.NewReader(respBody)), Options: opts,
	}
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return c.fail("%s → %d: %s", what, resp.StatusCode, oneLine(err))
	}
	if resp.StatusCode >= 400 {
		var env struct {
			RequestID string `json:"request_id"`
		}
		if err := json.Unmarshal(respBody, &env); err != nil || env.RequestID != resp.Header.Get("X-Request-Id") {
			return c.fail("%s → %d: request_id %q differs from X-Request-Id %q", what, resp.StatusCode,
				env.RequestID, resp.Header.Get("X-Request-Id"))
		}
	}
	return nil
}

// undocumented checks the answer to a path or method the document does not
// list: only the router's 404 or 405, in the envelope.
func (c *contractChecker) undocumented(what string, findErr error, resp *http.Response, respBody []byte) error {
	switch resp.StatusCode {
	case http.StatusNotFound, http.StatusMethodNotAllowed:
	case http.StatusBadRequest:
		// Text no database can store (NUL, invalid UTF-8) in the path or
		// query is refused before routing decides anything.
	default:
		return c.fail("%s: not in the document (%v) but answered %d", what, findErr, resp.StatusCode)
	}
	var v any
	if err := json.Unmarshal(respBody, &v); err != nil {
		return c.fail("%s → %d: body is not JSON: %v", what, resp.StatusCode, err)
	}
	if err := c.errEnv.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		return c.fail("%s → %d: not the error envelope: %s", what, resp.StatusCode, oneLine(err))
	}
	if resp.Header.Get("X-Request-Id") == "" {
		return c.fail("%s → %d: no X-Request-Id", what, resp.StatusCode)
	}
	return nil
}

// requestError is what the document says about a request: nil when it is
// valid, else why not.
func (c *contractChecker) requestError(req *http.Request, body []byte) error {
	vreq := req.Clone(context.Background())
	vreq.Body = io.NopCloser(bytes.NewReader(body))
	route, pathParams, err := c.router.FindRoute(vreq)
	if err != nil {
		return err
	}
	in := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: pathParams, Route: route, Options: c.options()}
	return openapi3filter.ValidateRequest(context.Background(), in)
}

// checkWebhook validates a delivery Quita sent to a test receiver against
// the document's webhooks: the canonical envelope for charge.* and payout.*,
// the legacy one for payment.* and withdrawal.*, with their headers.
func (c *contractChecker) checkWebhook(req *http.Request, body []byte) error {
	typ := req.Header.Get("X-Quita-Event-Type")
	name := "canonicalEvent"
	if strings.HasPrefix(typ, "payment.") || strings.HasPrefix(typ, "withdrawal.") {
		name = "legacyEvent"
	}
	c.mu.Lock()
	c.checked++
	c.seen["webhook "+name+" "+typ]++
	c.mu.Unlock()
	item := c.doc.Webhooks[name]
	vreq := req.Clone(context.Background())
	vreq.Body = io.NopCloser(bytes.NewReader(body))
	route := &routers.Route{Spec: c.doc, Path: name, PathItem: item, Method: http.MethodPost, Operation: item.Post}
	in := &openapi3filter.RequestValidationInput{Request: vreq, Route: route, Options: c.options()}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		return c.fail("webhook %s (%s): %s", name, typ, oneLine(err))
	}
	// X-Quita-Event-Type mirrors the body's type (event in the legacy
	// envelope).
	var env struct{ Type, Event string }
	_ = json.Unmarshal(body, &env)
	if env.Type+env.Event != typ {
		return c.fail("webhook %s: X-Quita-Event-Type %q, body says %q", name, typ, env.Type+env.Event)
	}
	return nil
}

// templatePath hides ids in a path so that one mismatch reads the same for
// every request that hits it.
func templatePath(u *url.URL) string {
	parts := strings.Split(u.Path, "/")
	for i, p := range parts {
		if len(p) >= 26 || strings.ContainsAny(p, "%\x00") {
			parts[i] = "{…}"
		}
	}
	return strings.Join(parts, "/")
}

func oneLine(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > 600 {
		s = s[:600] + "…"
	}
	return s
}

// contractTransport validates every exchange that passes through it with
// checker, or with the suite's shared one when checker is nil.
type contractTransport struct {
	next    http.RoundTripper
	checker *contractChecker
}

func (t contractTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	checker, err := t.checker, error(nil)
	if checker == nil {
		if checker, err = contract(); err != nil {
			return nil, err
		}
	}
	var body []byte
	if req.Body != nil {
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		_ = req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	respBody, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	if err := checker.check(req, body, resp, respBody); err != nil {
		return nil, err
	}
	return resp, nil
}
