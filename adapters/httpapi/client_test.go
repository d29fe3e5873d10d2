package httpapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/quitapix/quita/internal/testkit"
)

// apiResp is an API answer with its JSON decoded: Body for an object,
// List for an array.
type apiResp struct {
	Status int
	Header http.Header
	Raw    []byte
	Body   map[string]any
	List   []any
}

func (r apiResp) str(k string) string { s, _ := r.Body[k].(string); return s }

func (r apiResp) num(k string) int64 {
	f, _ := r.Body[k].(float64)
	return int64(f)
}

func (r apiResp) code() string {
	e, _ := r.Body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func (r apiResp) param() string {
	e, _ := r.Body["error"].(map[string]any)
	s, _ := e["param"].(string)
	return s
}

// apiCall sends method url with the apikey ("" sends none) and body (see
// testkit.Send) and decodes the JSON answer.
func apiCall(t testing.TB, method, url, key string, body any) apiResp {
	t.Helper()
	h := testkit.Header{}
	if key != "" {
		h["apikey"] = key
	}
	return apiCallHeader(t, method, url, h, body)
}

// apiCallHeader is apiCall with the request's headers as given.
func apiCallHeader(t testing.TB, method, url string, h testkit.Header, body any) apiResp {
	t.Helper()
	r := testkit.Do(t, method, url, body, h)
	out := apiResp{Status: r.Status, Header: r.Header, Raw: r.Body}
	if len(r.Body) == 0 {
		return out
	}
	var err error
	switch r.Body[0] {
	case '{':
		err = json.Unmarshal(r.Body, &out.Body)
	case '[':
		err = json.Unmarshal(r.Body, &out.List)
	}
	if err != nil {
		t.Fatalf("%s %s: decode %s: %v", method, url, r.Body, err)
	}
	return out
}

// wantStatus fails t unless r has status and, when code is set, that
// error code.
func wantStatus(t testing.TB, r apiResp, status int, code string) {
	t.Helper()
	if r.Status != status || (code != "" && r.code() != code) {
		t.Fatalf("got %d %s, want %d %s: %s", r.Status, r.code(), status, code, r.Raw)
	}
}
