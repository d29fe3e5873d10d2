package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/quitapix/quita/app"
)

// created is the answer to a create: 201 with v as the JSON body. App
// records it byte for byte for the request's idempotency key.
func created(v any) (app.Response, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return app.Response{}, err
	}
	return app.Response{StatusCode: http.StatusCreated, Body: b}, nil
}
