package checkout

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
)

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
	s, ok := c.loadScreen(w, r, "checkout card screen", c.src.CardScreen)
	if !ok {
		return
	}
	d := s.d
	d.Kind = "card"
	d.Base = "../"
	d.Title = s.t.CardTitle + ": " + d.Amount + " · " + s.v.MerchantName
	d.TestMode = true
	d.StatusURL = "../" + d.RawID
	d.SwitchURL = "card?lang=" + s.t.OtherLang
	if r.URL.Query().Get("lang") != "" {
		d.StatusURL += "?lang=" + s.lang
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
	raw, ok := c.statusRawID(w, r)
	if !ok {
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
	if errors.Is(err, app.ErrCardScreenUnavailable) {
		w.WriteHeader(http.StatusConflict)
		_, _ = w.Write([]byte(`{"error":{"type":"invalid_request_error","code":"charge_not_payable","message":"this charge can no longer be paid by card"}}`))
		return
	}
	c.answerStatus(w, r, "checkout card decision", st, err)
}
