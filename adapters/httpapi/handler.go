package httpapi

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// answerFunc is a handler that returns its answer instead of writing it;
// handle writes it.
type answerFunc func(w http.ResponseWriter, r *http.Request) (any, error)

// handle is the one epilogue of the API's handlers: an error goes out in
// the envelope (classify), an app.Response (a create's recorded answer) as
// recorded, marked Idempotent-Replayed on a replay, anything else as 200
// JSON.
func handle(h answerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := h(w, r)
		switch resp, recorded := v.(app.Response); {
		case err != nil:
			writeError(w, r, err)
		case recorded:
			if resp.Replayed {
				w.Header().Set("Idempotent-Replayed", "true")
			}
			writeRaw(w, resp.StatusCode, resp.Body)
		default:
			writeJSON(w, http.StatusOK, v)
		}
	}
}

// chargeFunc serves one charge, addressed by the route's {id}.
type chargeFunc func(w http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error)

// onCharge is the one prologue of the handlers of one charge: it resolves
// {id} (raw, ch_ or tx_; anything else is 404 before h runs) and the
// caller, then answers as handle does.
func onCharge(h chargeFunc) http.HandlerFunc {
	return handle(func(w http.ResponseWriter, r *http.Request) (any, error) {
		raw, ok := domain.ParseChargeID(mux.Vars(r)["id"])
		if !ok {
			return nil, ports.ErrNotFound
		}
		return h(w, r, callerFrom(r.Context()), raw)
	})
}
