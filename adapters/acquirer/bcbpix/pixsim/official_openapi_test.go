package pixsim_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/quitapix/quita/domain"
)

// officialSpecEnv names the API Pix OpenAPI (github.com/bacen/pix-api,
// openapi.yaml) the check below reads; the document is not part of this
// repository.
const officialSpecEnv = "QUITA_PIXAPI_OPENAPI"

// loadOfficialSpec loads the API Pix OpenAPI and mends the three defects
// of its 2.9 schemas that no answer can satisfy as written: patterns
// written between slashes ("/^\d{11}$/" matches no CPF), DadosRecebedor
// requiring logradouro, cidade, uf and cep of the cob itself instead of
// its recebedor, and the list items' idCob, required but never defined.
func loadOfficialSpec(t *testing.T) *openapi3.T {
	t.Helper()
	path := os.Getenv(officialSpecEnv)
	if path == "" {
		t.Skipf("%s is not set: point it at the API Pix openapi.yaml to check pixsim's answers against it", officialSpecEnv)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	seen := map[*openapi3.Schema]bool{}
	var mend func(s *openapi3.Schema)
	mend = func(s *openapi3.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		if p := s.Pattern; len(p) > 2 && strings.HasPrefix(p, "/") && strings.HasSuffix(p, "/") {
			s.Pattern = p[1 : len(p)-1]
		}
		for _, group := range []openapi3.SchemaRefs{s.AllOf, s.OneOf, s.AnyOf} {
			for _, r := range group {
				mend(r.Value)
			}
		}
		for _, r := range s.Properties {
			mend(r.Value)
		}
		if s.Items != nil {
			mend(s.Items.Value)
		}
	}
	for _, r := range doc.Components.Schemas {
		mend(r.Value)
	}
	doc.Components.Schemas["DadosRecebedor"].Value.Required = nil
	for _, part := range doc.Components.Schemas["CobsVConsultadas"].Value.Properties["cobs"].Value.Items.Value.AllOf {
		part.Value.Required = slices.DeleteFunc(part.Value.Required, func(s string) bool { return s == "idCob" })
	}
	return doc
}

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
// violation. Set QUITA_PIXAPI_OPENAPI to run it.
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
