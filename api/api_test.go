package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/quitapix/quita/api"
)

// TestDocumentIsValid is the document's linter (make lint runs it): the
// served JSON loads as OpenAPI 3.1, every $ref resolves, and kin-openapi's
// validation passes with examples, defaults and patterns checked.
func TestDocumentIsValid(t *testing.T) {
	raw, err := api.JSON()
	if err != nil {
		t.Fatal(err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi %q, want 3.1", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation(),
		openapi3.EnableSchemaDefaultsValidation(), openapi3.EnableSchemaPatternValidation()); err != nil {
		t.Fatalf("validate: %v", err)
	}
	ids := map[string]string{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.OperationID == "" {
				t.Errorf("%s %s has no operationId", method, path)
			} else if prev, dup := ids[op.OperationID]; dup {
				t.Errorf("operationId %s on %s %s and %s", op.OperationID, method, path, prev)
			}
			ids[op.OperationID] = method + " " + path
			if op.Responses.Len() == 0 {
				t.Errorf("%s %s has no responses", method, path)
			}
		}
	}
	if len(doc.Webhooks) != 2 {
		t.Errorf("webhooks: %d, want the canonical and the legacy envelope", len(doc.Webhooks))
	}
	lintHouseRules(t, doc)
}

// lintHouseRules are the document's own rules, beyond OpenAPI validity:
// what every operation of this API must say so that a client can rely on
// it (and the e2e contract check can hold the server to it).
func lintHouseRules(t *testing.T, doc *openapi3.T) {
	t.Helper()
	errSchema := doc.Components.Schemas["Error"]
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			at := method + " " + path
			if op.Summary == "" || len(op.Tags) == 0 {
				t.Errorf("%s: needs a summary and a tag", at)
			}
			security := doc.Security
			if op.Security != nil {
				security = *op.Security
			}
			for _, code := range []string{"400", "500"} {
				if op.Responses.Value(code) == nil {
					t.Errorf("%s: documents no %s", at, code)
				}
			}
			if len(security) > 0 && op.Responses.Value("401") == nil {
				t.Errorf("%s: authenticated but documents no 401", at)
			}
			if len(security) > 0 && security[0]["apikey"] != nil && op.Responses.Value("429") == nil {
				t.Errorf("%s: behind the per-key rate limit but documents no 429", at)
			}
			for code, ref := range op.Responses.Map() {
				r := ref.Value
				if h := r.Headers["X-Request-Id"]; h == nil || !h.Value.Required {
					t.Errorf("%s %s: X-Request-Id is not a required header", at, code)
				}
				if code[0] == '4' || code[0] == '5' {
					mt := r.Content.Get("application/json")
					if mt == nil || mt.Schema == nil || mt.Schema.Value != errSchema.Value {
						t.Errorf("%s %s: the body is not the error envelope", at, code)
					}
				}
				if (code == "429" || code == "503") && r.Headers["Retry-After"] == nil {
					t.Errorf("%s %s: no Retry-After header", at, code)
				}
			}
			for _, p := range op.Parameters {
				if p.Value.In == openapi3.ParameterInPath && !strings.Contains(path, "{"+p.Value.Name+"}") {
					t.Errorf("%s: path parameter %s is not in the path", at, p.Value.Name)
				}
			}
		}
	}
}

// TestJSONMatchesYAML: the served JSON is the committed YAML, key for key
// (kin-openapi reads both; they must describe the same document).
func TestJSONMatchesYAML(t *testing.T) {
	raw, err := api.JSON()
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	fromYAML, err := openapi3.NewLoader().LoadFromData(api.YAML)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(fromJSON)
	b, _ := json.Marshal(fromYAML)
	if string(a) != string(b) {
		t.Error("openapi.json differs from openapi.yaml once loaded")
	}
}
