package httpapi

import (
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
)

// PublicController serves what a payer's browser fetches without a key:
// the QR image of a charge, under the checkout base. The raw id in the
// path is 128 random bits, which is what keeps these addresses private.
type PublicController struct {
	charges *app.ChargeService
	qr      QRRenderer
}

// Routes registers the public routes on the checkout subrouter.
func (c *PublicController) Routes(r *mux.Router) {
	r.HandleFunc("/{id}/qr.png", c.qrPNG).Methods(http.MethodGet, http.MethodHead).Name("checkout.qr")
}

func (c *PublicController) qrPNG(w http.ResponseWriter, r *http.Request) {
	raw := mux.Vars(r)["id"]
	if !domain.ValidRawID(raw) {
		writeError(w, r, errNoCharge)
		return
	}
	ch, err := c.charges.GetPublic(r.Context(), raw)
	if err != nil {
		if isNotFound(err) {
			err = errNoCharge
		}
		writeError(w, r, err)
		return
	}
	pix := ch.Pix()
	if pix == nil || pix.BRCode == "" { // a subscription cycle's charge is debited: no code

		writeError(w, r, errNoCharge)
		return
	}
	png, err := c.qr.PNG(pix.BRCode)
	if err != nil {
		writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "image/png")
	h.Set("Content-Length", strconv.Itoa(len(png)))
	// The BR Code of a charge never changes: let browsers and CDNs keep it.
	h.Set("Cache-Control", "public, max-age=86400, immutable")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(png)
	}
}

var errNoCharge = &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "resource_not_found", Message: "no such charge"}
