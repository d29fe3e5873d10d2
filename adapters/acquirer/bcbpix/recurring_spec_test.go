package bcbpix_test

// The adapter's Pix Automático requests checked against the official API
// Pix OpenAPI document (github.com/bacen/pix-api, openapi.yaml 2.9): every
// request the adapter sends to pixsim is validated with kin-openapi's
// openapi3filter (path, query and body) before pixsim serves it. The
// document is read as pixsim's own check reads it ($PIXSIM_API_PIX_OPENAPI
// or the clone at $PIXSIM_API_PIX_REPO); without it the test skips. Two
// of the document's required fields no request can carry are dropped
// (RecBase: retentativa, which no schema defines, and idRec, which the
// PSP makes; SolicRecBase: pagador, which is destinatario), and the
// patterns written as JavaScript literals ("/^\d{11}$/") lose their
// slashes.

import (
	"bytes"
	"context"
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

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// readAPIPixDoc reads the official document as pixsim's own check does.
func readAPIPixDoc() ([]byte, error) {
	if f := os.Getenv("PIXSIM_API_PIX_OPENAPI"); f != "" {
		return os.ReadFile(f)
	}
	repo := os.Getenv("PIXSIM_API_PIX_REPO")
	if repo == "" {
		repo = "/work/.mirror/bacen+pix-api/repo"
	}
	return exec.Command("git", "-C", repo, "show", "HEAD:openapi.yaml").Output()
}

func loadAPIPixDoc(t *testing.T) *openapi3.T {
	t.Helper()
	raw, err := readAPIPixDoc()
	if err != nil {
		t.Skipf("no API Pix document: %v", err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	drop := func(name string, fields ...string) {
		s := doc.Components.Schemas[name]
		if s == nil || s.Value == nil {
			t.Fatalf("the document has no schema %s", name)
		}
		s.Value.Required = slices.DeleteFunc(s.Value.Required, func(r string) bool { return slices.Contains(fields, r) })
	}
	drop("RecBase", "retentativa", "idRec")
	drop("SolicRecBase", "pagador")
	seen := map[*openapi3.Schema]bool{}
	var visit func(*openapi3.SchemaRef)
	visit = func(ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		if p := s.Pattern; len(p) > 2 && strings.HasPrefix(p, "/") && strings.HasSuffix(p, "/") {
			s.Pattern = p[1 : len(p)-1]
		}
		for _, p := range s.Properties {
			visit(p)
		}
		visit(s.Items)
		for _, l := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
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
	return doc
}

// route finds the document's operation for a request path: a template
// with more literal segments wins.
func route(doc *openapi3.T, method, path string) (*routers.Route, map[string]string) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var best *routers.Route
	var bestParams map[string]string
	bestLiterals := -1
	for tmpl, item := range doc.Paths.Map() {
		op := item.GetOperation(method)
		tsegs := strings.Split(strings.Trim(tmpl, "/"), "/")
		if op == nil || len(tsegs) != len(segs) {
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

// specRequests wraps pixsim's handler: each Pix Automático request is
// validated against the document before pixsim serves it.
type specRequests struct {
	doc  *openapi3.T
	next http.Handler

	mu       sync.Mutex
	problems []string
	checked  map[string]int
}

var automaticoTags = []string{"Rec", "SolicRec", "CobR", "PayloadLocationRec", "WebhookRec", "WebhookCobR"}

func (s *specRequests) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt, params := route(s.doc, r.Method, r.URL.Path)
	if rt == nil || !slices.ContainsFunc(rt.Operation.Tags, func(t string) bool { return slices.Contains(automaticoTags, t) }) {
		s.next.ServeHTTP(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	check := r.Clone(r.Context())
	check.Body = io.NopCloser(bytes.NewReader(body))
	in := &openapi3filter.RequestValidationInput{Request: check, PathParams: params, Route: rt,
		Options: &openapi3filter.Options{AuthenticationFunc: func(context.Context, *openapi3filter.AuthenticationInput) error { return nil },
			MultiError: true, SkipSettingDefaults: true}}
	err := openapi3filter.ValidateRequest(r.Context(), in)
	s.mu.Lock()
	s.checked[r.Method+" "+rt.Path]++
	if err != nil {
		s.problems = append(s.problems, fmt.Sprintf("%s %s: %v\n%s", r.Method, rt.Path, err, body))
	}
	s.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.next.ServeHTTP(w, r)
}

// Every request the adapter makes for Pix Automático is one the official
// document accepts: the journeys, a solicrec, cobrs created, retried and
// cancelled, cancels and the webhooks.
func TestRecurringRequestsMatchTheAPIPixDocument(t *testing.T) {
	t.Parallel()
	doc := loadAPIPixDoc(t)
	pki := newPKI(t)
	spec := &specRequests{doc: doc, checked: map[string]int{}}
	a, sim := newRecurringAdapterOn(t, pki, func(sim *pixsim.Server) http.Handler { spec.next = sim; return spec })
	ctx := context.Background()
	for _, j := range []domain.Journey{domain.JourneyAuthorizationRequest, domain.JourneyQRCode, domain.JourneyQRCodeWithFirstPayment} {
		approvedRec(t, a, sim, "spec-"+string(j), j)
	}
	// The callbacks go nowhere: only the requests matter here.
	if err := a.RegisterWebhook(ctx, acct, "https://quita.invalid/hook"); err != nil {
		t.Fatal(err)
	}
	recurringCallsWithLostAnswers(t, a, sim)
	rec := approvedRec(t, a, sim, "spec-cancel", domain.JourneyQRCode)
	req := ports.RecurringChargeRequest{Scope: scope(), TxID: txid("spec-cancel"), RecID: rec.RecID,
		DueDate: brasiliaToday(t).AddDays(3), Amount: 4990, Info: "Ciclo 1"}
	if _, err := a.CreateRecurringCharge(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := a.CancelRecurringCharge(ctx, ports.CancelRecurringChargeRequest{Scope: scope(), TxID: req.TxID}); err != nil {
		t.Fatal(err)
	}
	if err := a.CancelRecurrence(ctx, ports.CancelRecurrenceRequest{Scope: scope(), RecID: rec.RecID}); err != nil {
		t.Fatal(err)
	}
	spec.mu.Lock()
	defer spec.mu.Unlock()
	for _, p := range spec.problems {
		t.Error(p)
	}
	for _, op := range []string{"POST /locrec", "POST /rec", "GET /rec", "GET /rec/{idRec}", "POST /solicrec",
		"PUT /cobr/{txid}", "GET /cobr/{txid}", "PATCH /cobr/{txid}", "PATCH /rec/{idRec}", "POST /cobr/{txid}/retentativa/{data}", "PUT /webhookrec", "PUT /webhookcobr"} {
		if spec.checked[op] == 0 {
			t.Errorf("no %s was checked (%v)", op, spec.checked)
		}
	}
}
