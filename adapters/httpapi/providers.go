package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
)

// ProvidersController receives acquirer notifications. The API Pix
// callback (POST <registered url>/pix with {"pix":[...]}) is not
// authenticated by an API key: its body is never trusted, only the
// end-to-end ids it names, each read back from the PSP before anything
// changes (app.PixReceiptService.Notify).
type ProvidersController struct {
	receipts *app.PixReceiptService
}

// Routes registers the callback on the root router (before /v1's API-key
// middleware).
func (c *ProvidersController) Routes(r *mux.Router) {
	r.HandleFunc("/v1/providers/bcbpix/{accountId}/pix", c.bcbpix).Methods(http.MethodPost).Name("providers.bcbpix.pix")
}

type pixCallback struct {
	Pix []struct {
		EndToEndID string `json:"endToEndId"`
	} `json:"pix"`
}

func (c *ProvidersController) bcbpix(w http.ResponseWriter, r *http.Request) {
	acct := mux.Vars(r)["accountId"]
	if !strings.HasPrefix(acct, domain.PrefixAccount) || len(acct) == len(domain.PrefixAccount) {
		writeError(w, r, &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "resource_not_found", Message: "no such resource"})
		return
	}
	body, err := readBody(w, r, false)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var cb pixCallback
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := json.Unmarshal(body, &cb); err != nil {
			writeError(w, r, badRequest("pix", "body_invalid", "the callback body must be {\"pix\":[...]}"))
			return
		}
	}
	ids := make([]string, 0, len(cb.Pix))
	for _, p := range cb.Pix {
		ids = append(ids, p.EndToEndID)
	}
	res, err := c.receipts.Notify(r.Context(), acct, ids)
	if errors.Is(err, app.ErrUnknownReceiver) {
		writeError(w, r, &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "resource_not_found", Message: "no such resource"})
		return
	}
	if err != nil {
		// The PSP retries a failed callback; every step is idempotent.
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"applied": res.Applied, "ignored": res.Ignored})
}
