package httpapi

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/api"
)

// openAPIRoutes registers GET /v1/openapi.json, the API's OpenAPI 3.1
// document (api/openapi.yaml as JSON). It needs no authentication, so it is
// registered on the root router before the apikey-protected /v1 router.
// The YAML is converted here, at start (once per process); should the
// embedded document not convert, the route answers 500 and api's tests fail.
func openAPIRoutes(r *mux.Router) {
	doc, err := api.JSON()
	r.HandleFunc("/v1/openapi.json", handle(func(_ http.ResponseWriter, _ *http.Request) (any, error) {
		if err != nil {
			return nil, err
		}
		return rawJSON(doc), nil
	})).Methods(http.MethodGet).Name("openapi.document")
}

// rawJSON is an answer already encoded as JSON.
type rawJSON []byte

func (j rawJSON) MarshalJSON() ([]byte, error) { return j, nil }
