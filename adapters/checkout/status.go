package checkout

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// statusBody is the whole public status document.
type statusBody struct {
	Status    domain.Status    `json:"status"`
	ExpiresAt domain.Timestamp `json:"expires_at"`
	// MethodsReady: the data of every method is there; a page showing
	// "preparing" reloads when it turns true.
	MethodsReady bool `json:"methods_ready"`
}

func (c *Controller) status(w http.ResponseWriter, r *http.Request) {
	raw, ok := c.statusRawID(w, r)
	if !ok {
		return
	}
	st, err := c.src.Status(r.Context(), raw)
	c.answerStatus(w, r, "checkout status", st, err)
}

// statusRawID sets the headers of a JSON answer and returns the path's raw
// id; a malformed one is answered 404 (ok false).
func (c *Controller) statusRawID(w http.ResponseWriter, r *http.Request) (raw string, ok bool) {
	jsonHeaders(w)
	raw = mux.Vars(r)["id"]
	if !domain.ValidRawID(raw) {
		c.writeStatusError(w, http.StatusNotFound)
		return "", false
	}
	return raw, true
}

// answerStatus writes st, or what err means: 404 for an unknown charge, a
// logged 500 (named what) for anything else.
func (c *Controller) answerStatus(w http.ResponseWriter, r *http.Request, what string, st app.CheckoutStatus, err error) {
	switch {
	case err == nil:
		c.writeStatus(w, st)
	case errors.Is(err, ports.ErrNotFound):
		c.writeStatusError(w, http.StatusNotFound)
	default:
		c.log.ErrorContext(r.Context(), what, "err", err)
		c.writeStatusError(w, http.StatusInternalServerError)
	}
}

// jsonHeaders are the headers of every JSON answer of the checkout.
func jsonHeaders(w http.ResponseWriter) {
	h := w.Header()
	securityHeaders(h, "")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "application/json")
}

// writeStatus answers the public status document of st.
func (c *Controller) writeStatus(w http.ResponseWriter, st app.CheckoutStatus) {
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
