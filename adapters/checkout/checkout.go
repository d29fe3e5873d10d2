// Package checkout is the hosted checkout page a payer opens from a
// charge's checkout_url: the amount, the merchant, the Pix QR code and
// copy-and-paste code, a countdown to the expiry and the live status, in
// Brazilian Portuguese or English. Everything it serves is embedded (one
// HTML template, one stylesheet, one script) and it makes no request to
// any other origin. The page is public: the unguessable raw id in its
// address is the only credential, so it shows an allowlist (app.CheckoutView)
// and nothing private.
package checkout

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// Source reads charges for the page. *app.CheckoutService implements it.
type Source interface {
	// View returns the payer's view of a charge; ports.ErrNotFound for an
	// unknown raw id.
	View(ctx context.Context, rawID string) (app.CheckoutView, error)
	// Status returns only the public status and expiry; ports.ErrNotFound
	// for an unknown raw id.
	Status(ctx context.Context, rawID string) (app.CheckoutStatus, error)
	// CardScreen returns the view of a test-mode charge offering
	// CREDIT_CARD for the sandbox card screen; ports.ErrNotFound otherwise.
	CardScreen(ctx context.Context, rawID string) (app.CheckoutView, error)
	// CardDecision approves or declines the card payment of the sandbox
	// card screen (test mode only).
	CardDecision(ctx context.Context, rawID string, approve bool) (app.CheckoutStatus, error)
}

var _ Source = (*app.CheckoutService)(nil)

// Config tunes the page.
type Config struct {
	// PollInterval is how often an open page asks for the status while the
	// charge is pending (default 3 s; slower while processing and after
	// errors).
	PollInterval time.Duration
}

// Controller serves the checkout page, its status endpoint and its assets.
type Controller struct {
	src  Source
	log  *slog.Logger
	poll time.Duration
}

// New returns the checkout controller.
func New(src Source, log *slog.Logger, cfg Config) *Controller {
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 3 * time.Second
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Controller{src: src, log: log, poll: cfg.PollInterval}
}

// Routes registers the page on the checkout subrouter (the path of
// {checkout_url_base}). Asset names cannot collide with raw ids, which are
// 26 base32 characters.
func (c *Controller) Routes(r *mux.Router) {
	r.HandleFunc("/static/{name}", c.asset).Methods(http.MethodGet, http.MethodHead).Name("checkout.asset")
	r.HandleFunc("/{id}/status", c.status).Methods(http.MethodGet).Name("checkout.status")
	r.HandleFunc("/{id}/card", c.cardPage).Methods(http.MethodGet, http.MethodHead).Name("checkout.card")
	r.HandleFunc("/{id}/card", c.cardDecide).Methods(http.MethodPost).Name("checkout.card_decide")
	// The sandbox acquirer's cardRedirectUrl ({base}/pix/card/{id}).
	r.HandleFunc("/pix/card/{id}", c.cardRedirect).Methods(http.MethodGet, http.MethodHead).Name("checkout.card_redirect")
	r.HandleFunc("/{id}", c.page).Methods(http.MethodGet, http.MethodHead).Name("checkout.page")
	// The bare checkout path is a link cut short. No catch-all beyond
	// that: it would shadow pages other controllers mount here later.
	r.HandleFunc("/", c.notFound).Methods(http.MethodGet, http.MethodHead).Name("checkout.not_found")
}

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

// statusBody is the whole public status document.
type statusBody struct {
	Status    domain.Status    `json:"status"`
	ExpiresAt domain.Timestamp `json:"expires_at"`
	// MethodsReady: the data of every method is there; a page showing
	// "preparing" reloads when it turns true.
	MethodsReady bool `json:"methods_ready"`
}

func (c *Controller) status(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	securityHeaders(h, "")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "application/json")
	raw := mux.Vars(r)["id"]
	if !domain.ValidRawID(raw) {
		c.writeStatusError(w, http.StatusNotFound)
		return
	}
	st, err := c.src.Status(r.Context(), raw)
	if err != nil {
		code := http.StatusNotFound
		if !errors.Is(err, ports.ErrNotFound) {
			c.log.ErrorContext(r.Context(), "checkout status", "err", err)
			code = http.StatusInternalServerError
		}
		c.writeStatusError(w, code)
		return
	}
	b, err := json.Marshal(statusBody{Status: st.Status, ExpiresAt: domain.Timestamp(st.ExpiresAt), MethodsReady: st.MethodsReady})
	if err != nil {
		c.writeStatusError(w, http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

func (c *Controller) writeStatusError(w http.ResponseWriter, code int) {
	w.WriteHeader(code)
	if code == http.StatusNotFound {
		_, _ = w.Write([]byte(`{"error":{"type":"invalid_request_error","code":"resource_not_found","message":"no such charge"}}`))
		return
	}
	_, _ = w.Write([]byte(`{"error":{"type":"api_error","code":"internal_error","message":"internal error"}}`))
}

// brasilia is Brasília time. Brazil has had no daylight saving since 2019,
// and a fixed zone needs no tz database in the binary.
var brasilia = time.FixedZone("BRT", -3*60*60)

// stateOrder lists the closed states the page can switch to, in the order
// their sections appear.
var stateOrder = []domain.Status{
	domain.StatusPaid, domain.StatusProcessing, domain.StatusExpired, domain.StatusCancelled,
	domain.StatusRefunded, domain.StatusFailed, domain.StatusDisputed,
}

type stateView struct {
	Key   string
	Title string
	Body  string
	Shown bool
}

// panel is one payment method's section: Kind is pix, boleto, multibanco,
// mbway, card or crypto (page.html has one block per kind). A panel is
// Preparing while the acquirer still produces its data and Unavailable
// when the data never came.
type panel struct {
	Kind        string
	Label       string
	Preparing   bool
	Unavailable bool
	// Pix.
	BRCode string
	QRURL  string
	QRAlt  string
	// Boleto.
	Line    string
	Barcode string
	PDFURL  string
	Expiry  string
	// Multibanco (Expiry too).
	Entity    string
	Reference string
	Amount    string
	// MB WAY: the instruction naming the phone's last digits.
	PhoneNote string
	// Card: the card screen (sandbox) or the provider's page.
	CardURL string
	// Crypto.
	Address        string
	Network        string
	CryptoAmount   string
	CryptoCurrency string
}

type pageData struct {
	T    *messages
	Kind string // "charge", "card", "not_found", "error"
	// Base leads from the page's address to the checkout path ("" on the
	// page, "../" on the card screen).
	Base  string
	RawID string
	// MethodsPending: some panel is preparing; the script reloads when the
	// status endpoint says the data is ready.
	MethodsPending bool
	Title          string
	Merchant       string
	Initial        string
	Amount         string
	Description    string
	Status         string
	Pending        bool
	Panels         []panel
	// OffersPix: the charge offers Pix (its panel is missing only when
	// the acquirer gave no Pix data).
	OffersPix bool
	States    []stateView
	PayTitle  string
	// Footer overrides the Pix footer on pages offering other methods.
	Footer      string
	TestMode    bool
	ExpiresISO  string
	ExpiresText string
	Countdown   string
	NowMS       int64
	PollMS      int64
	StatusURL   string
	SwitchURL   string
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// language picks the page language: ?lang= (the switch link) wins over
// Accept-Language.
func language(r *http.Request) string {
	switch r.URL.Query().Get("lang") {
	case LangEnglish:
		return LangEnglish
	case LangPortuguese, "pt":
		return LangPortuguese
	}
	return NegotiateLanguage(r.Header.Get("Accept-Language"))
}

func (c *Controller) page(w http.ResponseWriter, r *http.Request) {
	raw := mux.Vars(r)["id"]
	if !domain.ValidRawID(raw) {
		c.notFound(w, r)
		return
	}
	v, err := c.src.View(r.Context(), raw)
	if err != nil {
		if errors.Is(err, ports.ErrNotFound) {
			c.notFound(w, r)
			return
		}
		c.log.ErrorContext(r.Context(), "checkout page", "err", err)
		c.render(w, r, http.StatusInternalServerError, "", c.errorData(language(r), "error"))
		return
	}
	lang := language(r)
	t := catalog[lang]
	amount := FormatAmount(v.Amount, string(v.Currency), lang)
	d := &pageData{
		T:           t,
		Kind:        "charge",
		Merchant:    v.MerchantName,
		Initial:     initial(v.MerchantName),
		Amount:      amount,
		Description: v.Description,
		Status:      string(v.Status),
		Pending:     v.Status == domain.StatusPending,
		TestMode:    v.TestMode,
		ExpiresISO:  v.ExpiresAt.UTC().Format(domain.TimestampLayout),
		ExpiresText: v.ExpiresAt.In(brasilia).Format("15:04"),
		Countdown:   countdown(v.ExpiresAt.Sub(v.Now)),
		NowMS:       v.Now.UnixMilli(),
		PollMS:      c.poll.Milliseconds(),
		StatusURL:   raw + "/status",
		SwitchURL:   raw + "?lang=" + t.OtherLang,
	}
	d.OffersPix = slices.Contains(v.Methods, domain.MethodPix)
	var imgOrigin string
	d.Panels, imgOrigin = panels(v, t, lang, amount)
	if r.URL.Query().Get("lang") != "" {
		// Keep the payer's chosen language on the sandbox card screen.
		for i := range d.Panels {
			if d.Panels[i].CardURL == raw+"/card" {
				d.Panels[i].CardURL += "?lang=" + lang
			}
		}
	}
	pixOnly := len(d.Panels) == 1 && d.Panels[0].Kind == "pix"
	payTitle := t.PayTitle
	if !pixOnly && len(d.Panels) > 0 {
		payTitle = t.PayTitleAny
	}
	d.PayTitle = payTitle
	if !pixOnly && len(d.Panels) > 0 {
		d.Footer = t.FooterAny
	}
	d.Title = payTitle + ": " + amount + " · " + v.MerchantName
	for _, p := range d.Panels {
		if p.Preparing {
			d.MethodsPending = true
		}
	}
	for _, s := range stateOrder {
		st := t.States[string(s)]
		if over, ok := t.StatesAny[string(s)]; ok && !pixOnly && len(d.Panels) > 0 {
			st = over
		}
		d.States = append(d.States, stateView{Key: string(s), Title: st.Title, Body: st.Body, Shown: s == v.Status})
		if s == v.Status {
			d.Title = st.Title + " · " + v.MerchantName
		}
	}
	c.render(w, r, http.StatusOK, imgOrigin, d)
}

func (c *Controller) notFound(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, http.StatusNotFound, "", c.errorData(language(r), "not_found"))
}

func (c *Controller) errorData(lang, kind string) *pageData {
	t := catalog[lang]
	d := &pageData{T: t, Kind: kind, Title: t.NotFoundTitle}
	if kind == "error" {
		d.Title = t.ErrorTitle
	}
	return d
}

func (c *Controller) render(w http.ResponseWriter, r *http.Request, code int, imgOrigin string, d *pageData) {
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)
	h := w.Header()
	securityHeaders(h, imgOrigin)
	h.Set("Cache-Control", "no-store")
	h.Set("Vary", "Accept-Language")
	if err := pageTmpl.Execute(buf, d); err != nil {
		c.log.ErrorContext(r.Context(), "checkout render", "err", err)
		h.Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte("internal error\n"))
		return
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

// origin returns scheme://host of an absolute http(s) URL, "" otherwise.
func origin(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// initial is the merchant's monogram for the header badge.
func initial(name string) string {
	for _, r := range name {
		if r != ' ' {
			return strings.ToUpper(string(r))
		}
	}
	return "?"
}

// countdown renders the time left as the script does (m:ss or h:mm:ss), so
// the page reads right before the script runs and without it.
func countdown(d time.Duration) string {
	s := int64(d / time.Second)
	if s < 0 {
		s = 0
	}
	h, m, sec := s/3600, s/60%60, s%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, sec)
	}
	return fmt.Sprintf("%02d:%02d", m, sec)
}
