package checkout_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/quitapix/quita/adapters/checkout"
)

// Every response the checkout sends carries the strict headers.
func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	h := defaultHandler()
	paths := []string{
		"/checkout/" + rawPending,
		"/checkout/" + rawPending + "/status",
		"/checkout/" + rawUnknown,
		"/checkout/not-an-id",
		"/checkout/static/checkout.js",
		"/checkout/static/checkout.css",
	}
	for _, p := range paths {
		res, _ := get(t, h, p)
		csp := res.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", p, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("%s: CSP allows inline or eval: %q", p, csp)
		}
		for k, want := range map[string]string{
			"X-Frame-Options":        "DENY",
			"Referrer-Policy":        "no-referrer",
			"X-Content-Type-Options": "nosniff",
		} {
			if got := res.Header.Get(k); got != want {
				t.Errorf("%s: %s = %q, want %q", p, k, got, want)
			}
		}
	}
}

func TestStatusEndpoint(t *testing.T) {
	t.Parallel()
	h := defaultHandler()
	res, body := get(t, h, "/checkout/"+rawPending+"/status")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q", cc)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"status": "pending", "expires_at": "2026-11-22T15:30:00.000Z", "methods_ready": true}
	if len(got) != len(want) || got["status"] != want["status"] || got["expires_at"] != want["expires_at"] || got["methods_ready"] != true {
		t.Errorf("body %v, want exactly %v", got, want)
	}
	for _, p := range []string{"/checkout/" + rawUnknown + "/status", "/checkout/nope/status"} {
		if res, _ := get(t, h, p); res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, res.StatusCode)
		}
	}
}

func TestAssets(t *testing.T) {
	t.Parallel()
	h := defaultHandler()
	_, page := get(t, h, "/checkout/"+rawPending)
	for _, tt := range []struct{ name, ctype string }{
		{"checkout.js", "text/javascript; charset=utf-8"},
		{"checkout.css", "text/css; charset=utf-8"},
		{"icon.svg", "image/svg+xml"},
	} {
		ref := regexp.MustCompile(`static/` + regexp.QuoteMeta(tt.name) + `\?v=[0-9a-f]{12}`).FindString(page)
		if ref == "" {
			t.Errorf("page does not link %s with a version", tt.name)
			continue
		}
		res, body := get(t, h, "/checkout/"+ref)
		if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != tt.ctype || len(body) == 0 {
			t.Errorf("%s: %d %q %d bytes", tt.name, res.StatusCode, res.Header.Get("Content-Type"), len(body))
		}
		if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "immutable") {
			t.Errorf("%s: versioned asset not immutable: %q", tt.name, cc)
		}
		res, _ = get(t, h, "/checkout/"+ref, "If-None-Match", res.Header.Get("ETag"))
		if res.StatusCode != http.StatusNotModified {
			t.Errorf("%s: revalidation gave %d", tt.name, res.StatusCode)
		}
	}
}

// The page, its stylesheet and its script together stay within 50 KB.
func TestPageWeight(t *testing.T) {
	t.Parallel()
	_, body := get(t, defaultHandler(), "/checkout/"+rawPending, "Accept-Language", "pt-BR")
	total := len(body) + checkout.PageWeight()
	t.Logf("page weight: HTML %d B + CSS/JS %d B = %d B", len(body), checkout.PageWeight(), total)
	if total > 50*1024 {
		t.Errorf("page weighs %d bytes, budget is 51200", total)
	}
}

func TestHeadAnswersWithoutBody(t *testing.T) {
	t.Parallel()
	req := httptest.NewRequest(http.MethodHead, "/checkout/"+rawPending, nil)
	rec := httptest.NewRecorder()
	defaultHandler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 || rec.Header().Get("Content-Length") == "" {
		t.Errorf("HEAD: %d, %d body bytes, Content-Length %q", rec.Code, rec.Body.Len(), rec.Header().Get("Content-Length"))
	}
}
