package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"sort"
	"time"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// pageHandler serves one authenticated page or form. It writes the answer
// itself (render or redirect); an error it returns is answered by fail. A
// form's fields are already parsed, under maxForm, by authed.
type pageHandler func(w http.ResponseWriter, r *http.Request, s *session) error

func (c *Controller) page(h pageHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r, sessionOf(r.Context())); err != nil {
			c.fail(w, r, err)
		}
	}
}

// show renders page with data and the error named by ?err= (one of a
// fixed set of messages: nothing from the query is echoed).
func (c *Controller) show(w http.ResponseWriter, r *http.Request, s *session, page string, data any) error {
	v := c.view(r, s, page)
	if e := r.URL.Query().Get("err"); e != "" {
		v.Error = v.T["err_"+e]
	}
	v.Data = data
	c.render(w, r, http.StatusOK, v)
	return nil
}

// back redirects after a form (post/redirect/get) with a notice or error
// key for the next page.
func back(w http.ResponseWriter, r *http.Request, path, param, key string) error {
	if key != "" {
		path += "?" + param + "=" + url.QueryEscape(key)
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
	return nil
}

func modeBase(s *session) string { return Base + "/" + string(s.mode) }

// ---- overview ----

type overviewData struct {
	Currency          domain.Currency
	Available         int64
	Pending           int64
	NextReleaseAt     *time.Time
	NextReleaseAmount int64
	TodayVolume       int64
	TodayCount        int64
	TodayPaid         int64
	TodayRate         int64
	MonthVolume       int64
	MonthCount        int64
	MonthPaid         int64
	MonthRate         int64
	AverageTicket     int64
	Chart             chart
	Recent            []*domain.Charge
}

func (c *Controller) overview(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx := r.Context()
	d := overviewData{Currency: domain.CurrencyBRL}
	ws, err := c.d.Payments.Wallets(ctx, s.caller)
	if err != nil {
		return err
	}
	for _, wl := range ws {
		if wl.Currency == domain.CurrencyBRL {
			d.Available, d.Pending, d.NextReleaseAt, d.NextReleaseAmount = wl.Available, wl.Pending, wl.NextReleaseAt, wl.NextReleaseAmount
		}
	}
	month, err := c.d.Payments.Metrics(ctx, s.caller, 30, domain.CurrencyBRL)
	if err != nil {
		return err
	}
	// Today is the last day of the window (the UTC day, as the stats API
	// counts days): one aggregate serves both.
	now := time.Now().UTC()
	for _, day := range month.Daily {
		if day.Date == now.Format("2006-01-02") {
			d.TodayVolume, d.TodayCount, d.TodayPaid = day.Volume, day.Created, day.Paid
		}
	}
	d.TodayRate = percent(d.TodayPaid, d.TodayCount)
	d.MonthVolume, d.MonthCount, d.MonthPaid, d.MonthRate = month.Volume, month.Created, month.Paid, percent(month.Paid, month.Created)
	d.AverageTicket = month.AverageTicket
	d.Chart = dailyChart(month.Daily, now, 30, langOf(r))
	if d.Recent, _, err = c.d.Payments.Charges().List(ctx, ports.ChargeQuery{Scope: s.caller.Scope(), Limit: 6}); err != nil {
		return err
	}
	return c.show(w, r, s, "overview", d)
}

// percent is part of whole in whole percent, rounded half up (0 of 0 is 0).
func percent(part, whole int64) int64 {
	if whole <= 0 {
		return 0
	}
	return (100*part + whole/2) / whole
}

// ---- charges ----

type chargesData struct {
	Query    string
	Status   string
	From     string
	To       string
	Statuses []domain.TxStatus
	Charges  []*domain.Charge
	NextURL  string
	FirstURL string
}

// pageSize is the rows of a list page.
const pageSize = 25

func (c *Controller) charges(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx := r.Context()
	qv := r.URL.Query()
	d := chargesData{Query: qv.Get("q"), Status: qv.Get("status"), From: qv.Get("from"), To: qv.Get("to"), Statuses: domain.TxStatuses}
	if d.Query != "" {
		id, err := c.d.Reads.FindCharge(ctx, s.caller, d.Query)
		if err == nil {
			http.Redirect(w, r, modeBase(s)+"/charges/"+domain.PrefixCharge+id, http.StatusSeeOther)
			return nil
		}
		if !errors.Is(err, ports.ErrNotFound) {
			return err
		}
		v := c.view(r, s, "charges")
		v.Error = v.T["err_search_none"]
		v.Data = d
		c.render(w, r, http.StatusOK, v)
		return nil
	}
	q := ports.ChargeQuery{Scope: s.caller.Scope(), Limit: pageSize}
	bad := ""
	if d.Status != "" {
		if st := domain.TxStatus(d.Status); st.Valid() {
			q.Statuses = []domain.TxStatus{st}
		} else {
			bad, d.Status = "filter", ""
		}
	}
	// A day whose bound falls outside the instants a store keeps (to=9999-12-31
	// ends in year 10000 UTC) is an invalid filter like a malformed one.
	if d.From != "" {
		if t, ok := parseDay(d.From); ok && ports.InTimeRange(t) {
			q.CreatedAfter = &t
		} else {
			bad, d.From = "filter", ""
		}
	}
	if d.To != "" {
		t, ok := parseDay(d.To)
		end := t.AddDate(0, 0, 1).Add(-time.Microsecond)
		if ok && ports.InTimeRange(end) {
			q.CreatedBefore = &end
		} else {
			bad, d.To = "filter", ""
		}
	}
	if after := qv.Get("after"); after != "" {
		raw, ok := domain.ParseChargeID(after)
		if !ok {
			return ports.ErrNotFound
		}
		q.StartingAfter = raw
		d.FirstURL = chargesURL(s, d, "")
	}
	cs, more, err := c.d.Payments.Charges().List(ctx, q)
	if err != nil {
		return err
	}
	d.Charges = cs
	if more && len(cs) > 0 {
		d.NextURL = chargesURL(s, d, cs[len(cs)-1].ID())
	}
	v := c.view(r, s, "charges")
	if bad != "" {
		v.Error = v.T["err_filter"]
	}
	v.Data = d
	c.render(w, r, http.StatusOK, v)
	return nil
}

func chargesURL(s *session, d chargesData, after string) string {
	v := url.Values{}
	for k, val := range map[string]string{"status": d.Status, "from": d.From, "to": d.To, "after": after} {
		if val != "" {
			v.Set(k, val)
		}
	}
	u := modeBase(s) + "/charges"
	if len(v) > 0 {
		u += "?" + v.Encode()
	}
	return u
}

// parseDay reads a date input (YYYY-MM-DD) as that day in São Paulo.
func parseDay(s string) (time.Time, bool) {
	t, err := time.ParseInLocation("2006-01-02", s, saoPaulo)
	return t, err == nil
}

// ---- charge detail ----

type timelineEntry struct {
	Event      domain.Event
	Deliveries []domain.WebhookDelivery
}

type chargeData struct {
	Charge     *domain.Charge
	Timeline   []timelineEntry
	Orphans    []domain.WebhookDelivery
	Refunds    []domain.Refund
	Refundable bool
	Receipt    bool
	IdemKey    string
	// Splits share a platform's charge among its sub-accounts; FeePayer
	// says who bears the fees ("" without splits).
	Splits   []splitRow
	FeePayer domain.FeePayer
}

// chargeID reads {id} in any form a merchant holds; anything else is 404.
func chargeID(r *http.Request) (string, error) {
	raw, ok := domain.ParseChargeID(mux.Vars(r)["id"])
	if !ok {
		return "", ports.ErrNotFound
	}
	return raw, nil
}

func (c *Controller) charge(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx := r.Context()
	raw, err := chargeID(r)
	if err != nil {
		return err
	}
	ch, err := c.d.Payments.Charges().Get(ctx, s.caller, raw)
	if err != nil {
		return err
	}
	evs, err := c.d.Reads.ChargeEvents(ctx, s.caller, raw)
	if err != nil {
		return err
	}
	ds, _, err := c.d.Webhooks.ListDeliveries(ctx, ports.DeliveryQuery{Scope: s.caller.Scope(), ChargeID: raw, Limit: 100})
	if err != nil {
		return err
	}
	rfs, err := c.d.Payments.ListRefunds(ctx, s.caller, raw)
	if err != nil {
		return err
	}
	d := chargeData{Charge: ch, Refunds: rfs}
	if d.Splits, d.FeePayer, err = c.chargeSplits(r, s.caller, ch); err != nil {
		return err
	}
	byEvent := map[string]int{}
	for i, e := range evs {
		d.Timeline = append(d.Timeline, timelineEntry{Event: e})
		byEvent[e.ID] = i
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].CreatedAt.Before(ds[j].CreatedAt) })
	for _, dl := range ds {
		if i, ok := byEvent[dl.EventID]; ok {
			d.Timeline[i].Deliveries = append(d.Timeline[i].Deliveries, dl)
		} else {
			d.Orphans = append(d.Orphans, dl)
		}
	}
	st := ch.Status()
	d.Refundable = (st == domain.TxPaid || st == domain.TxApproved) && ch.RefundableAmount() > 0
	d.Receipt = ch.Settlement() != nil && ch.Credited()
	if d.Refundable {
		if d.IdemKey, err = randomToken(); err != nil {
			return err
		}
	}
	return c.show(w, r, s, "charge", d)
}

func (c *Controller) refund(w http.ResponseWriter, r *http.Request, s *session) error {
	raw, err := chargeID(r)
	if err != nil {
		return err
	}
	// Another account's charge is 404 before the form is looked at.
	if _, err := c.d.Payments.Charges().Get(r.Context(), s.caller, raw); err != nil {
		return err
	}
	detail := modeBase(s) + "/charges/" + domain.PrefixCharge + raw
	amount, ok := parseAmount(r.PostFormValue("amount"))
	if !ok || amount <= 0 {
		return back(w, r, detail, "err", "refund_amount")
	}
	reason := r.PostFormValue("reason")
	if len([]rune(reason)) > 500 {
		return back(w, r, detail, "err", "refund_reason")
	}
	if domain.HasTextControl(reason, true) {
		return back(w, r, detail, "err", "refund_reason_chars")
	}
	key := r.PostFormValue("idem")
	if key == "" || len(key) > 64 {
		return back(w, r, detail, "err", "refund_failed")
	}
	idem := app.Idempotency{Key: "dashboard-" + key, Fingerprint: fingerprint("dashboard refund", raw, formatInt(amount), reason)}
	_, err = c.d.Payments.Refund(r.Context(), s.caller, raw, app.RefundInput{Amount: &amount, Reason: reason}, idem,
		func(rf domain.Refund) (app.Response, error) {
			return app.Response{StatusCode: http.StatusCreated, Body: []byte(`{"id":"` + domain.PrefixRefund + rf.ID + `"}`)}, nil
		})
	switch {
	case err == nil:
		return back(w, r, detail, "done", "refunded")
	case errors.Is(err, domain.ErrRefundExceedsAmount):
		return back(w, r, detail, "err", "refund_exceeds")
	case errors.Is(err, domain.ErrInsufficientBalance):
		return back(w, r, detail, "err", "refund_balance")
	case errors.Is(err, domain.ErrChargeNotRefundable), errors.Is(err, domain.ErrRefundNotSupported):
		return back(w, r, detail, "err", "refund_not_refundable")
	case errors.Is(err, app.ErrIdempotencyKeyReused), errors.Is(err, app.ErrIdempotencyKeyInUse):
		return back(w, r, detail, "err", "refund_twice")
	case errors.Is(err, ports.ErrNotFound):
		return err
	}
	var ve *domain.ValidationError
	if errors.As(err, &ve) {
		return back(w, r, detail, "err", "refund_failed")
	}
	return err
}
