package api_test

import (
	"context"
	"encoding/json"
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
