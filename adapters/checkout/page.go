package checkout

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
	// TimeUp: pending, but expires_at has passed. Nothing can be paid
	// any more; the charge waits for news of a payment made in time
	// before it expires (app.ChargesConfig.ExpiryGrace).
	TimeUp bool
	Panels []panel
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
	// DueDate and LastDay are a due-date charge's dates as the payer reads
	// them; DueLines what today's amount is made of ("" for none).
	DueDate, LastDay string
	DueLines         []dueLine
	Countdown        string
	NowMS            int64
	PollMS           int64
	StatusURL        string
	SwitchURL        string
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

// screen is what every page of a charge starts from: the view, the
// payer's language and the data the header and amount lines show.
type screen struct {
	v    app.CheckoutView
	lang string
	t    *messages
	d    *pageData
}

// loadScreen resolves the path's raw id with load (named what in the log)
// and fills the page data every screen of a charge shares. An unknown id
// gets the 404 page, any other error the error page: then ok is false and
// the answer is written.
func (c *Controller) loadScreen(w http.ResponseWriter, r *http.Request, what string,
	load func(ctx context.Context, rawID string) (app.CheckoutView, error)) (s screen, ok bool) {
	raw := mux.Vars(r)["id"]
	if !domain.ValidRawID(raw) {
		c.notFound(w, r)
		return s, false
	}
	v, err := load(r.Context(), raw)
	if err != nil {
		if errors.Is(err, ports.ErrNotFound) {
			c.notFound(w, r)
			return s, false
		}
		c.log.ErrorContext(r.Context(), what, "err", err)
		c.render(w, r, http.StatusInternalServerError, "", c.errorData(language(r), "error"))
		return s, false
	}
	lang := language(r)
	t := catalog[lang]
	return screen{v: v, lang: lang, t: t, d: &pageData{
		T:           t,
		RawID:       raw,
		Merchant:    v.MerchantName,
		Initial:     initial(v.MerchantName),
		Amount:      FormatAmount(v.Amount, string(v.Currency), lang),
		Description: v.Description,
		Status:      string(v.Status),
		Pending:     v.Status == domain.StatusPending,
		TimeUp:      v.Status == domain.StatusPending && !v.Now.Before(v.ExpiresAt),
	}}, true
}

func (c *Controller) page(w http.ResponseWriter, r *http.Request) {
	s, ok := c.loadScreen(w, r, "checkout page", c.src.View)
	if !ok {
		return
	}
	v, t, lang, d := s.v, s.t, s.lang, s.d
	raw, amount := d.RawID, d.Amount
	d.Kind = "charge"
	d.TestMode = v.TestMode
	d.ExpiresISO = v.ExpiresAt.UTC().Format(domain.TimestampLayout)
	d.ExpiresText = v.ExpiresAt.In(brasilia).Format("15:04")
	if v.Due != nil {
		dueView(d, v, lang)
	}
	d.Countdown = countdown(v.ExpiresAt.Sub(v.Now))
	d.NowMS = v.Now.UnixMilli()
	d.PollMS = c.poll.Milliseconds()
	d.StatusURL = raw + "/status"
	d.SwitchURL = raw + "?lang=" + t.OtherLang
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
	for _, state := range stateOrder {
		st := t.States[string(state)]
		if over, ok := t.StatesAny[string(state)]; ok && !pixOnly && len(d.Panels) > 0 {
			st = over
		}
		d.States = append(d.States, stateView{Key: string(state), Title: st.Title, Body: st.Body, Shown: state == v.Status})
		if state == v.Status {
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
