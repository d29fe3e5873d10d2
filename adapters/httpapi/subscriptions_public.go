package httpapi

import (
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
)

// subscriptionQR serves the QR image of a QR-journey subscription under
// the checkout base ({checkout_url_base}/sub/{raw}/qr.png), public like a
// charge's: the raw id is what keeps the address private.
type subscriptionQR struct {
	subs *app.SubscriptionService
	qr   QRRenderer
}

// Routes registers the image on the checkout subrouter.
func (c *subscriptionQR) Routes(r *mux.Router) {
	r.HandleFunc("/sub/{id}/qr.png", c.png).Methods(http.MethodGet, http.MethodHead).Name("checkout.subscription_qr")
}

var errNoSubscription = &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "resource_not_found",
	Message: "no such subscription"}

func (c *subscriptionQR) png(w http.ResponseWriter, r *http.Request) {
	raw := mux.Vars(r)["id"]
	if !domain.ValidRawID(raw) {
		writeError(w, r, errNoSubscription)
		return
	}
	code, err := c.subs.QRCode(r.Context(), raw)
	if err != nil {
		if isNotFound(err) {
			err = errNoSubscription
		}
		writeError(w, r, err)
		return
	}
	png, err := c.qr.PNG(code)
	if err != nil {
		writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "image/png")
	h.Set("Content-Length", strconv.Itoa(len(png)))
	h.Set("Cache-Control", "public, max-age=86400, immutable") // a subscription's code never changes
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(png)
	}
}
