package checkout

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"
)

//go:embed assets
var assetFS embed.FS

// asset is one embedded static file with its precomputed headers.
type asset struct {
	body        []byte
	contentType string
	etag        string
	version     string
}

var (
	assets = map[string]*asset{
		"checkout.css": {contentType: "text/css; charset=utf-8"},
		"checkout.js":  {contentType: "text/javascript; charset=utf-8"},
		"icon.svg":     {contentType: "image/svg+xml"},
	}
	pageTmpl = template.Must(template.New("page.html").Funcs(template.FuncMap{
		"assetURL": assetURL,
		"multi":    func(ps []panel) bool { return len(ps) > 1 },
	}).ParseFS(assetFS, "assets/page.html"))
)

func init() {
	for name, a := range assets {
		b, err := fs.ReadFile(assetFS, "assets/"+name)
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(b)
		a.body = b
		a.version = hex.EncodeToString(sum[:6])
		a.etag = `"` + a.version + `"`
	}
}

// assetURL is the versioned address of an asset, relative to the page
// (both live directly under the checkout path), so the page works under
// any checkout_url_base.
func assetURL(name string) string {
	return "static/" + name + "?v=" + assets[name].version
}

// PageWeight is the uncompressed size of the page's own assets, CSS + JS
// (the HTML varies a little per charge; see the tests for the total).
func PageWeight() int {
	return len(assets["checkout.css"].body) + len(assets["checkout.js"].body)
}

// securityHeaders are sent with everything the checkout serves. img-src
// may also name the QR's origin (see page).
func securityHeaders(h http.Header, imgOrigin string) {
	img := "'self'"
	if imgOrigin != "" {
		img += " " + imgOrigin
	}
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src "+img+
		"; connect-src 'self'; font-src 'none'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=(), usb=()")
}

func (c *Controller) asset(w http.ResponseWriter, r *http.Request) {
	a, ok := assets[mux.Vars(r)["name"]]
	if !ok {
		c.notFound(w, r)
		return
	}
	h := w.Header()
	securityHeaders(h, "")
	h.Set("Content-Type", a.contentType)
	h.Set("ETag", a.etag)
	if r.URL.Query().Get("v") == a.version {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "public, max-age=300")
	}
	if match := r.Header.Get("If-None-Match"); match == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(a.body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(a.body)
	}
}
