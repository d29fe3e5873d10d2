package checkout

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// methodKinds maps a payment method to its panel kind, in no particular
// order: the panels follow the order of the charge's methods.
var methodKinds = map[domain.Method]string{
	domain.MethodPix:        "pix",
	domain.MethodBoleto:     "boleto",
	domain.MethodMultibanco: "multibanco",
	domain.MethodMBWay:      "mbway",
	domain.MethodCreditCard: "card",
	domain.MethodCrypto:     "crypto",
}

// panels builds one panel per method the charge offers, in its order,
// and the QR's origin for img-src.
func panels(v app.CheckoutView, t *messages, lang, amount string) ([]panel, string) {
	var (
		out       []panel
		imgOrigin string
	)
	for _, m := range v.Methods {
		kind, ok := methodKinds[m]
		if !ok {
			continue
		}
		p := panel{Kind: kind, Label: t.MethodNames[kind]}
		switch m {
		case domain.MethodPix:
			if v.Pix == nil {
				p.Unavailable = true
				break
			}
			p.BRCode, p.QRURL = v.Pix.BRCode, v.Pix.QRCodeURL
			p.QRAlt = fmt.Sprintf(t.QRAlt, amount, v.MerchantName)
			imgOrigin = origin(v.Pix.QRCodeURL)
		case domain.MethodBoleto:
			if b := v.Boleto; b != nil {
				p.Line, p.Barcode, p.PDFURL = b.Line, b.Barcode, httpURL(b.PDFURL)
				p.Expiry = formatDate(b.ExpiresAt.In(brasilia), lang)
			} else {
				p.Preparing, p.Unavailable = v.MethodsPending, !v.MethodsPending
			}
		case domain.MethodMultibanco:
			if mb := v.Multibanco; mb != nil {
				p.Entity, p.Reference = mb.Entity, groupDigits(mb.Reference, 3)
				p.Amount = FormatAmount(v.Amount, string(v.Currency), lang)
				p.Expiry = formatDate(mb.ExpiresAt.UTC(), lang)
			} else {
				p.Preparing, p.Unavailable = v.MethodsPending, !v.MethodsPending
			}
		case domain.MethodMBWay:
			if v.MBWayPhoneEnding == "" {
				p.Unavailable = true
				break
			}
			p.PhoneNote = fmt.Sprintf(t.MBWayNote, v.MBWayPhoneEnding)
		case domain.MethodCreditCard:
			switch {
			case v.TestMode:
				// The sandbox card screen, served here (test mode only).
				// It does not need the acquirer's data.
				p.CardURL = v.RawID + "/card"
			case v.Card != nil && httpURL(v.Card.RedirectURL) != "":
				p.CardURL = v.Card.RedirectURL
			default:
				p.Preparing, p.Unavailable = v.MethodsPending, !v.MethodsPending
			}
		case domain.MethodCrypto:
			if c := v.Crypto; c != nil {
				p.Address, p.Network, p.CryptoAmount, p.CryptoCurrency = c.Address, c.Network, c.Amount, c.Currency
			} else {
				p.Preparing, p.Unavailable = v.MethodsPending, !v.MethodsPending
			}
		}
		out = append(out, p)
	}
	return out, imgOrigin
}

// httpURL returns s when it is an absolute http(s) URL, "" otherwise (no
// javascript: or data: link reaches the page).
func httpURL(s string) string {
	if origin(s) == "" {
		return ""
	}
	return s
}

// groupDigits writes s in groups of n from the left ("123456789" →
// "123 456 789"), as Multibanco references are printed.
func groupDigits(s string, n int) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if i > 0 && i%n == 0 {
			b.WriteByte(' ')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// formatDate is a due date as the payer reads it: 25/11/2026 in
// Portuguese, Nov 25, 2026 in English.
func formatDate(t time.Time, lang string) string {
	if t.IsZero() {
		return ""
	}
	if lang == LangEnglish {
		return t.Format("Jan 2, 2006")
	}
	return t.Format("02/01/2006")
}

// cardRedirect sends the sandbox's cardRedirectUrl to the card screen.
func (c *Controller) cardRedirect(w http.ResponseWriter, r *http.Request) {
	raw := mux.Vars(r)["id"]
	if !domain.ValidRawID(raw) {
		c.notFound(w, r)
		return
	}
	h := w.Header()
	securityHeaders(h, "")
	h.Set("Cache-Control", "no-store")
	h.Set("Location", "../../"+raw+"/card")
	w.WriteHeader(http.StatusSeeOther)
}

// cardPage is the sandbox card screen: a test-mode page where the payer
// approves or declines the card payment. A live charge gets the 404 page.
func (c *Controller) cardPage(w http.ResponseWriter, r *http.Request) {
	raw := mux.Vars(r)["id"]
	if !domain.ValidRawID(raw) {
		c.notFound(w, r)
		return
	}
	v, err := c.src.CardScreen(r.Context(), raw)
	if err != nil {
		if errors.Is(err, ports.ErrNotFound) {
			c.notFound(w, r)
			return
		}
		c.log.ErrorContext(r.Context(), "checkout card screen", "err", err)
		c.render(w, r, http.StatusInternalServerError, "", c.errorData(language(r), "error"))
		return
	}
	lang := language(r)
	t := catalog[lang]
	amount := FormatAmount(v.Amount, string(v.Currency), lang)
	d := &pageData{
		T:           t,
		Kind:        "card",
		Base:        "../",
		RawID:       raw,
		Title:       t.CardTitle + ": " + amount + " · " + v.MerchantName,
		Merchant:    v.MerchantName,
		Initial:     initial(v.MerchantName),
		Amount:      amount,
		Description: v.Description,
		Status:      string(v.Status),
		Pending:     v.Status == domain.StatusPending,
		TestMode:    true,
		StatusURL:   "../" + raw,
		SwitchURL:   "card?lang=" + t.OtherLang,
	}
	if r.URL.Query().Get("lang") != "" {
		d.StatusURL += "?lang=" + lang
	}
	c.render(w, r, http.StatusOK, "", d)
}

// cardDecision is the card screen's request body.
type cardDecision struct {
	Decision string `json:"decision"`
}

// cardDecide records the payer's answer on the card screen. It takes JSON
// only, so a cross-site form cannot post it (a cross-origin JSON request
// needs a preflight nobody answers).
func (c *Controller) cardDecide(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	securityHeaders(h, "")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "application/json")
	raw := mux.Vars(r)["id"]
	if !domain.ValidRawID(raw) {
		c.writeStatusError(w, http.StatusNotFound)
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		w.WriteHeader(http.StatusUnsupportedMediaType)
		_, _ = w.Write([]byte(`{"error":{"type":"invalid_request_error","code":"unsupported_media_type","message":"send application/json"}}`))
		return
	}
	var in cardDecision
	if err := json.NewDecoder(io.LimitReader(r.Body, 1024)).Decode(&in); err != nil || (in.Decision != "approve" && in.Decision != "decline") {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":{"type":"invalid_request_error","code":"parameter_invalid","message":"decision must be approve or decline"}}`))
		return
	}
	st, err := c.src.CardDecision(r.Context(), raw, in.Decision == "approve")
	switch {
	case errors.Is(err, ports.ErrNotFound):
		c.writeStatusError(w, http.StatusNotFound)
		return
	case errors.Is(err, app.ErrCardScreenUnavailable):
		w.WriteHeader(http.StatusConflict)
		_, _ = w.Write([]byte(`{"error":{"type":"invalid_request_error","code":"charge_not_payable","message":"this charge can no longer be paid by card"}}`))
		return
	case err != nil:
		c.log.ErrorContext(r.Context(), "checkout card decision", "err", err)
		c.writeStatusError(w, http.StatusInternalServerError)
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
