package dashboard

import (
	"errors"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// ---- payouts ----

type payoutsData struct {
	Payouts  []*domain.Payout
	NextURL  string
	FirstURL string
}

func (c *Controller) payouts(w http.ResponseWriter, r *http.Request, s *session) error {
	q := ports.PayoutQuery{Scope: s.caller.Scope(), Limit: pageSize}
	d := payoutsData{}
	if after := r.URL.Query().Get("after"); after != "" {
		raw, ok := payoutID(after)
		if !ok {
			return ports.ErrNotFound
		}
		q.StartingAfter = raw
		d.FirstURL = modeBase(s) + "/payouts"
	}
	ps, more, err := c.d.Payouts.List(r.Context(), q)
	if err != nil {
		return err
	}
	d.Payouts = ps
	if more && len(ps) > 0 {
		d.NextURL = modeBase(s) + "/payouts?after=" + domain.PrefixPayout + ps[len(ps)-1].ID()
	}
	return c.show(w, r, s, "payouts", d)
}

// payoutID reads a po_ id or its raw part.
func payoutID(s string) (string, bool) {
	raw := strings.TrimPrefix(s, domain.PrefixPayout)
	return raw, domain.ValidRawID(raw)
}

// payoutReceipt downloads a paid payout's receipt (comprovante de
// transferência).
func (c *Controller) payoutReceipt(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r.Context())
	raw, ok := payoutID(mux.Vars(r)["id"])
	if !ok {
		c.fail(w, r, ports.ErrNotFound)
		return
	}
	doc, err := c.d.Receipts.PayoutReceipt(r.Context(), s.caller, raw, locale(r))
	c.download(w, r, doc, err)
}

func (c *Controller) cancelPayout(w http.ResponseWriter, r *http.Request, s *session) error {
	raw, ok := payoutID(mux.Vars(r)["id"])
	if !ok {
		return ports.ErrNotFound
	}
	_, err := c.d.Payouts.Cancel(r.Context(), s.caller, raw)
	if errors.Is(err, domain.ErrPayoutNotCancellable) || errors.Is(err, domain.ErrPayoutNotOpen) {
		return back(w, r, modeBase(s)+"/payouts", "err", "payout_not_cancellable")
	}
	if err != nil {
		return err
	}
	return back(w, r, modeBase(s)+"/payouts", "done", "payout_cancelled")
}
