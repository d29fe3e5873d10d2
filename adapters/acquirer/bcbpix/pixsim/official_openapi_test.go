package pixsim_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/quitapix/quita/domain"
)

// loadOfficialSpec is the API Pix document with its errata
// (apipix_errata_test.go), or skips the test when it is not at hand.
func loadOfficialSpec(t *testing.T) *openapi3.T { return requireAPIPix(t) }

// answerSchema is the schema of the answer code of method path.
func answerSchema(t *testing.T, doc *openapi3.T, method, path, code string) *openapi3.Schema {
	t.Helper()
	item := doc.Paths.Find(path)
	if item == nil || item.GetOperation(method) == nil {
		t.Fatalf("the spec has no %s %s", method, path)
	}
	resp := item.GetOperation(method).Responses.Value(code)
	if resp == nil {
		t.Fatalf("the spec documents no %s for %s %s", code, method, path)
	}
	for _, mt := range resp.Value.Content {
		return mt.Schema.Value
	}
	t.Fatalf("%s %s %s has no content", method, path, code)
	return nil
}

// pixsim's cobv answers — create, read, revision, list, the payload
// location's JWS payload and their problems — validate against the
// official API Pix OpenAPI (mended as loadOfficialSpec says) with no
// violation (the document read by readAPIPix).
func TestCobVAnswersMatchTheOfficialOpenAPI(t *testing.T) {
	t.Parallel()
	doc := loadOfficialSpec(t)
	_, c, _ := startCobV(t)
	check := func(method, path, code, body string) {
		t.Helper()
		var v any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatalf("%s %s: %s: %v", method, path, body, err)
		}
		if err := answerSchema(t, doc, method, path, code).VisitJSON(v, openapi3.MultiErrors()); err != nil {
			t.Errorf("%s %s %s: %v\n%s", method, path, code, err, body)
		}
	}
	id := domain.DeriveTxID("pixsim", "official")
	code, _, body := c.raw("PUT", "/cobv/"+id, cobvBody)
	if code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	check("PUT", "/cobv/{txid}", "201", body)
	var cob map[string]any
	_ = json.Unmarshal([]byte(body), &cob)
	_, _, body = c.raw("GET", "/cobv/"+id, "")
	check("GET", "/cobv/{txid}", "200", body)
	_, _, body = c.raw("PATCH", "/cobv/"+id, `{"valor":{"original":"120.00","juros":null}}`)
	check("PATCH", "/cobv/{txid}", "200", body)
	_, _, body = c.raw("GET", "/cobv?inicio=2020-01-01T00:00:00Z&fim=2030-01-01T00:00:00Z&cpf=12345678909", "")
	check("GET", "/cobv", "200", body)
	_, _, body = c.raw("PUT", "/cobv/"+domain.DeriveTxID("pixsim", "official-bad"), `{"chave":"k@example.com"}`)
	check("PUT", "/cobv/{txid}", "400", body)

	for _, dpp := range []string{"2026-03-05", "2026-03-25"} {
		code, _, jws := get(t, c.base+locationPath(t, cob)+"?DPP="+dpp)
		parts := strings.Split(jws, ".")
		if code != 200 || len(parts) != 3 {
			t.Fatalf("payload: %d %s", code, jws)
		}
		payload, err := base64.RawURLEncoding.DecodeString(parts[1])
		if err != nil {
			t.Fatal(err)
		}
		check("GET", "/cobv/{pixUrlAccessToken}", "200", string(payload))
	}
	_, _, body = get(t, c.base+locationPath(t, cob)+"?DPP=2020-01-01")
	check("GET", "/cobv/{pixUrlAccessToken}", "400", body)
}
