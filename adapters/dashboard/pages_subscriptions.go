package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// subscriptionStatuses are the status filter's choices, in the order a
// subscription lives them.
var subscriptionStatuses = []domain.SubscriptionStatus{
	domain.SubscriptionPendingAuthorization, domain.SubscriptionActive, domain.SubscriptionRejected,
	domain.SubscriptionExpired, domain.SubscriptionCancelled, domain.SubscriptionCompleted,
}

// ---- subscriptions ----

// subscriptionsData is the list page. Each subscription is its public
// object with the payer's document masked: the page never holds it in
// clear.
type subscriptionsData struct {
	Status        string
	Statuses      []domain.SubscriptionStatus
	Subscriptions []domain.PublicSubscription
	NextURL       string
	FirstURL      string
}

func (c *Controller) subscriptions(w http.ResponseWriter, r *http.Request, s *session) error {
	qv := r.URL.Query()
	d := subscriptionsData{Status: qv.Get("status"), Statuses: subscriptionStatuses}
	q := ports.SubscriptionQuery{Scope: s.caller.Scope(), Limit: pageSize}
	bad := false
	if d.Status != "" {
		if st := domain.SubscriptionStatus(d.Status); st.Valid() {
			q.Statuses = []domain.SubscriptionStatus{st}
		} else {
			bad, d.Status = true, ""
		}
	}
	if after := qv.Get("after"); after != "" {
		raw, ok := domain.ParseSubscriptionID(after)
		if !ok {
			return ports.ErrNotFound
		}
		q.StartingAfter = raw
		d.FirstURL = subscriptionsURL(s, d.Status, "")
	}
	subs, more, err := c.d.Subscriptions.List(r.Context(), q)
	if err != nil {
		return err
	}
	for _, sub := range subs {
		d.Subscriptions = append(d.Subscriptions, sub.Public(domain.Links{}).Masked())
	}
	if more && len(subs) > 0 {
		d.NextURL = subscriptionsURL(s, d.Status, domain.PrefixSubscription+subs[len(subs)-1].ID())
	}
	v := c.view(r, s, "subscriptions")
	if bad {
		v.Error = v.T["err_filter"]
	}
	v.Data = d
	c.render(w, r, http.StatusOK, v)
	return nil
}

func subscriptionsURL(s *session, status, after string) string {
	v := url.Values{}
	if status != "" {
		v.Set("status", status)
	}
	if after != "" {
		v.Set("after", after)
	}
	u := modeBase(s) + "/subscriptions"
	if len(v) > 0 {
		u += "?" + v.Encode()
	}
	return u
}

// ---- subscription detail ----

type subscriptionData struct {
	// Sub is the public object with the payer's document masked.
	Sub domain.PublicSubscription
	// Cycles are a page of the cycles, latest first.
	Cycles         []domain.CycleSummary
	OlderCyclesURL string
	LatestURL      string
	Cancellable    bool
	// BRCode is the code a QR-journey payer scans while the mandate
	// awaits authorisation, "" otherwise.
	BRCode string
}

// subscriptionID reads {id}: a sub_ id or its raw part; anything else is
// 404.
func subscriptionID(r *http.Request) (string, error) {
	raw, ok := domain.ParseSubscriptionID(mux.Vars(r)["id"])
	if !ok {
		return "", ports.ErrNotFound
	}
	return raw, nil
}

func subscriptionPath(s *session, raw string) string {
	return modeBase(s) + "/subscriptions/" + domain.PrefixSubscription + raw
}

func (c *Controller) subscription(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx := r.Context()
	raw, err := subscriptionID(r)
	if err != nil {
		return err
	}
	sub, err := c.d.Subscriptions.Get(ctx, s.caller, raw)
	if err != nil {
		return err
	}
	cycles, err := c.d.Subscriptions.Cycles(ctx, s.caller, raw)
	if err != nil {
		return err
	}
	d := subscriptionData{Sub: sub.Public(domain.Links{}).Masked(), Cancellable: !sub.Status().Terminal()}
	if sub.Status() == domain.SubscriptionPendingAuthorization && d.Sub.Pix != nil {
		d.BRCode = d.Sub.Pix.BRCode
	}
	before := 0
	if b := r.URL.Query().Get("cycles_before"); b != "" {
		n, err := strconv.Atoi(b)
		if err != nil || n < 2 {
			return ports.ErrNotFound
		}
		before = n
		d.LatestURL = subscriptionPath(s, raw)
	}
	slices.Reverse(cycles)
	for _, cy := range cycles {
		if before > 0 && cy.Number() >= before {
			continue
		}
		if len(d.Cycles) == pageSize {
			d.OlderCyclesURL = subscriptionPath(s, raw) + "?cycles_before=" + strconv.Itoa(d.Cycles[pageSize-1].Cycle)
			break
		}
		d.Cycles = append(d.Cycles, cy.Summary())
	}
	return c.show(w, r, s, "subscription", d)
}

// cancelSubscription is the API's cancel (POST
// /v1/subscriptions/{id}/cancel): the mandate is cancelled at the
// acquirer, then the subscription and its open cycles.
func (c *Controller) cancelSubscription(w http.ResponseWriter, r *http.Request, s *session) error {
	raw, err := subscriptionID(r)
	if err != nil {
		return err
	}
	detail := subscriptionPath(s, raw)
	_, err = c.d.Subscriptions.Cancel(r.Context(), s.caller, raw)
	switch {
	case err == nil:
		return back(w, r, detail, "done", "subscription_cancelled")
	case errors.Is(err, domain.ErrSubscriptionNotCancellable):
		return back(w, r, detail, "err", "subscription_not_cancellable")
	case errors.Is(err, app.ErrRecurringNotSupported):
		return back(w, r, detail, "err", "subscription_unsupported")
	case errors.Is(err, ports.ErrNotFound):
		return err
	}
	// The acquirer could not cancel the mandate now (its answer is
	// logged, never shown): nothing changed, the merchant may try again.
	c.log.ErrorContext(r.Context(), "dashboard", "route", routeName(r), "err", err)
	return back(w, r, detail, "err", "subscription_cancel_failed")
}
