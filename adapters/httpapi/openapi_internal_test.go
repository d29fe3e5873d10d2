package httpapi

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/api"
)

// discardWriter is a ResponseWriter that keeps nothing of the body, so
// that what a request allocates is the handler's own.
type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}

// TestOpenAPIDocumentIsNotEncodedPerRequest: serving the document
// allocates far less than the document's size per request, in either
// encoding: it is converted and compressed once, not per request. Not
// parallel: it reads the process's allocation counter.
func TestOpenAPIDocumentIsNotEncodedPerRequest(t *testing.T) {
	doc, err := api.JSON()
	if err != nil {
		t.Fatal(err)
	}
	r := mux.NewRouter()
	openAPIRoutes(r)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, accept := range []string{"identity", "gzip"} {
		req := httptest.NewRequest(http.MethodGet, "/v1/openapi.json", nil)
		req.Header.Set("Accept-Encoding", accept)
		serve := func() { r.ServeHTTP(&discardWriter{h: http.Header{}}, req) }
		serve() // warm up the router
		const n = 50
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range n {
			serve()
		}
		runtime.ReadMemStats(&after)
		if per := (after.TotalAlloc - before.TotalAlloc) / n; per > uint64(len(doc))/20 {
			t.Errorf("%s: %d bytes allocated per request for a %d-byte document", accept, per, len(doc))
		}
	}
}
