// Package api holds Quita's OpenAPI 3.1 document (openapi.yaml), the
// contract of the /v1 surface, embedded so that quitad can serve it at
// GET /v1/openapi.json. The end-to-end suite validates every request and
// response against it (e2e/openapi_test.go), TestRoutesAreDocumented in
// adapters/httpapi fails when a route is missing from it, and
// TestDocumentIsValid (run by make lint) keeps it a valid document.
package api

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"go.yaml.in/yaml/v4"
)

// YAML is the document as committed.
//
//go:embed openapi.yaml
var YAML []byte

// JSON returns the document converted to JSON, computed once.
var JSON = sync.OnceValues(func() ([]byte, error) { return toJSON(YAML) })

// toJSON converts a YAML document to JSON. Mapping keys become strings
// (a response code such as 200 may be read as a number), aliases are
// expanded.
func toJSON(doc []byte) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(doc, &v); err != nil {
		return nil, fmt.Errorf("api: parse openapi.yaml: %w", err)
	}
	out, err := json.Marshal(jsonValue(v))
	if err != nil {
		return nil, fmt.Errorf("api: encode openapi.json: %w", err)
	}
	return out, nil
}

func jsonValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = jsonValue(e)
		}
	case map[any]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[fmt.Sprint(k)] = jsonValue(e)
		}
		return out
	case []any:
		for i, e := range t {
			t[i] = jsonValue(e)
		}
	}
	return v
}
