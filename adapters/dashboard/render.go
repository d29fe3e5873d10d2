package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
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

var assets = map[string]*asset{
	"dashboard.css": {contentType: "text/css; charset=utf-8"},
	"dashboard.js":  {contentType: "text/javascript; charset=utf-8"},
	"icon.svg":      {contentType: "image/svg+xml"},
}

// pages are the templates, each the layout plus one page's "content".
var pages = map[string]*template.Template{}

// pageNames are the page templates in assets/ (login uses the bare layout).
var pageNames = []string{"login", "overview", "charges", "charge", "subscriptions", "subscription", "refunds", "payouts", "webhooks", "keys", "logs", "secret", "error",
	"subaccounts", "subaccount", "invited", "invite", "login_code", "security", "security_totp", "security_codes"}

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
	for _, fm := range []template.FuncMap{subscriptionFuncs, subaccountFuncs, securityFuncs} {
		for name, fn := range fm {
			funcs[name] = fn
		}
	}
	base := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(assetFS, "assets/layout.html", "assets/partials.html"))
	for _, p := range pageNames {
		pages[p] = template.Must(template.Must(base.Clone()).ParseFS(assetFS, "assets/"+p+".html"))
	}
}

// assetURL is the versioned, absolute address of an asset.
func assetURL(name string) string {
	return Base + "/static/" + name + "?v=" + assets[name].version
}

// AssetWeight is the size of the stylesheet, script and icon every page
// loads (the HTML is measured per page by the tests).
func AssetWeight() int {
	n := 0
	for _, a := range assets {
		n += len(a.body)
	}
	return n
}

// securityHeaders are sent with everything the dashboard serves: no
// inline script or style, nothing from another origin, forms post only
// here, never framed, never cached (pages show private data).
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "+
		"font-src 'none'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
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
	securityHeaders(h)
	h.Set("Content-Type", a.contentType)
	h.Set("ETag", a.etag)
	if r.URL.Query().Get("v") == a.version {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "public, max-age=300")
	}
	if r.Header.Get("If-None-Match") == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(a.body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(a.body)
	}
}

// view is what every template gets.
type view struct {
	Lang  string
	T     map[string]string
	Page  string
	Title string
	// Mode is "live" or "test"; ModeBase is the pages' prefix in it and
	// OtherMode the same page in the other mode.
	Mode      string
	ModeBase  string
	OtherMode string
	Account   string
	// Platform shows the sub-account pages: the session's account is not
	// itself a sub-account.
	Platform bool
	CSRF     string
	// Path is this page's address, for the language links.
	Path   string
	Notice string
	Error  string
	Data   any
	// Now is the server's clock when the page is rendered (what is
	// overdue).
	Now time.Time
}

func (c *Controller) view(r *http.Request, s *session, page string) *view {
	lang := langOf(r)
	v := &view{Lang: lang, T: messages[lang], Page: page, Path: safeNext(r.URL.RequestURI()), Now: time.Now()}
	if c.d.Reads != nil {
		v.Now = c.d.Reads.Now()
	}
	v.Title = v.T["nav_"+page]
	if s != nil {
		v.Mode = string(s.mode)
		v.ModeBase = Base + "/" + v.Mode
		v.OtherMode = otherModePath(r.URL.Path, s.mode, otherMode(s.mode))
		v.Account = s.caller.Account.Name
		v.Platform = c.platform(s)
		v.CSRF = csrfToken(s.token)
		if n := r.URL.Query().Get("done"); n != "" {
			v.Notice = v.T["done_"+n]
		}
	}
	return v
}

// otherMode is the mode the switch leads to from m.
func otherMode(m domain.Mode) domain.Mode {
	if m == domain.ModeTest {
		return domain.ModeLive
	}
	return domain.ModeTest
}

// otherModePath is the same kind of page in the other mode; a page of one
// object (a charge) becomes its list, since ids do not cross modes, but a
// sub-account's page stays its page (sub-accounts belong to no mode).
func otherModePath(path string, from, to domain.Mode) string {
	rest := path[len(Base+"/"+string(from)):]
	section := ""
	if len(rest) > 1 {
		section = rest[1:]
		for i := range len(section) {
			if section[i] == '/' {
				section = section[:i]
				break
			}
		}
	}
	if id, ok := strings.CutPrefix(rest, "/subaccounts/"); ok {
		id, _, _ = strings.Cut(id, "/")
		if _, valid := domain.ParseAccountID(id); valid {
			return Base + "/" + string(to) + "/subaccounts/" + id
		}
	}
	switch section {
	case "charges", "subscriptions", "refunds", "payouts", "webhooks", "keys", "logs", "subaccounts", "security":
		return Base + "/" + string(to) + "/" + section
	}
	return Base + "/" + string(to) + "/"
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// render executes a page into a buffer first, so a template error is a
// clean 500 and never half a page.
func (c *Controller) render(w http.ResponseWriter, r *http.Request, status int, v *view) {
	t := pages[v.Page]
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)
	if err := t.ExecuteTemplate(buf, "layout.html", v); err != nil {
		c.log.ErrorContext(r.Context(), "dashboard template", "page", v.Page, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	securityHeaders(h)
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

type errorData struct {
	Status  int
	Message string
}

func (c *Controller) errorPage(w http.ResponseWriter, r *http.Request, status int, key string) {
	s := sessionOf(r.Context())
	v := c.view(r, s, "error")
	// The language links and the mode switch lead home: an error page
	// repeats nothing of the address it was asked for.
	v.Path = Base + "/"
	if s != nil {
		v.OtherMode = otherModePath(v.ModeBase+"/", s.mode, otherMode(s.mode))
	}
	v.Title = v.T[key]
	v.Data = errorData{Status: status, Message: v.T[key]}
	c.render(w, r, status, v)
}

func (c *Controller) notFound(w http.ResponseWriter, r *http.Request) {
	c.errorPage(w, r, http.StatusNotFound, "err_not_found")
}

func (c *Controller) forbidden(w http.ResponseWriter, r *http.Request) {
	c.errorPage(w, r, http.StatusForbidden, "err_forbidden")
}

// fail answers an unexpected error: not found stays a 404 (another
// account's ids look exactly like unknown ones); anything else is logged
// and shown as a generic error, never its text.
func (c *Controller) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, ports.ErrNotFound) {
		c.notFound(w, r)
		return
	}
	c.log.ErrorContext(r.Context(), "dashboard", "route", routeName(r), "err", err)
	c.errorPage(w, r, http.StatusInternalServerError, "err_internal")
}

func routeName(r *http.Request) string {
	if cr := mux.CurrentRoute(r); cr != nil {
		return cr.GetName()
	}
	return ""
}
