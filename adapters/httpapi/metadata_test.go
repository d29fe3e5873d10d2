package httpapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/quitatest"
)

// Metadata that a store cannot keep, or that is too big (security.md,
// items 6 and 10), is a 400 naming metadata on both wire formats and on both
// databases, never a 500; the limits' edges are accepted.
func TestMetadataBounds(t *testing.T) {
	t.Parallel()
	long := func(n int) string { return `"` + strings.Repeat("a", n) + `"` }
	manyKeys := func(keys, valueLen int) string {
		parts := make([]string, keys)
		for i := range parts {
			parts[i] = fmt.Sprintf(`"k%02d":%s`, i, long(valueLen))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	refused := map[string]string{
		"huge number":           `{"n":1e999999}`,
		"negative huge number":  `{"n":-1e400}`,
		"lone high surrogate":   `{"s":"\ud800x"}`,
		"lone low surrogate":    `{"s":"\udc00"}`,
		"nested lone surrogate": `{"o":{"s":["\ud800"]}}`,
		"value of 501 chars":    `{"s":` + long(501) + `}`,
		"object value too long": `{"o":{"s":` + long(600) + `}}`,
		"whole object too big":  manyKeys(20, 450),
		"51 keys":               manyKeys(51, 1),
		"60,000 keys":           manyKeys(60_000, 1),
	}
	// NUL anywhere in a body is refused before any field is read
	// (body_invalid), metadata included.
	for _, meta := range []string{`{"s":"a\u0000b"}`, `{"a\u0000":"b"}`} {
		refused["NUL: "+meta] = meta
	}
	accepted := map[string]string{
		"value of 500 chars":  `{"s":` + long(500) + `}`,
		"accented 500 chars":  `{"s":"` + strings.Repeat("ã", 500) + `"}`,
		"paired surrogates":   `{"s":"\ud83d\ude00"}`,
		"escaped backslash u": `{"s":"\\u0000 \\ud800"}`,
		"big finite number":   `{"n":1.7e308}`,
		"under the whole cap": manyKeys(16, 450),
		"50 keys":             manyKeys(50, 1),
	}
	for _, db := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", testenv.SQLiteDSN}, {"postgres", testenv.PostgresDSN}} {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			srv := quitatest.NewServer(t, quitatest.Options{DatabaseURL: db.dsn(t)})
			acct := srv.NewAccount(t, "Loja Metadados")
			n := 0
			create := func(path, meta string) resp {
				n++
				hdr := map[string]string{"apikey": acct.TestKey, "Idempotency-Key": fmt.Sprintf("meta-%s-%04d", db.name, n)}
				body := `{"amount":1000,"currency":"BRL","payment_method":"pix","metadata":` + meta + `}`
				if path == "/payments" {
					body = fmt.Sprintf(`{"amount":1000,"currency":"BRL","paymentMethods":["PIX"],"idempotencyKey":"meta-%s-%04d","metadata":%s}`, db.name, n, meta)
				}
				return call(t, http.MethodPost, srv.BaseURL+path, hdr, body)
			}
			for _, path := range []string{"/charges", "/payments"} {
				for name, meta := range refused {
					r := create(path, meta)
					if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), "metadata") && !strings.Contains(string(r.Body), "body_invalid") {
						t.Errorf("%s %s: %d %s", path, name, r.Status, r.Body)
					}
				}
				for name, meta := range accepted {
					if r := create(path, meta); r.Status != http.StatusCreated {
						t.Errorf("%s %s: %d %s", path, name, r.Status, r.Body)
					}
				}
			}
		})
	}
}
