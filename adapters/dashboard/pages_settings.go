package dashboard

import (
	"errors"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// ---- webhooks ----

type webhooksData struct {
	Endpoints  []domain.WebhookEndpoint
	Catalog    []domain.EventDefinition
	Deliveries []domain.WebhookDelivery
	Total      int
	Stats      ports.DeliveryStats
	Endpoint   string
	PrevURL    string
	NextURL    string
	MaxReached bool
}

func (c *Controller) webhooks(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx := r.Context()
	eps, err := c.d.Webhooks.ListEndpoints(ctx, s.caller)
	if err != nil {
		return err
	}
	d := webhooksData{Endpoints: eps, Catalog: domain.EventCatalog, MaxReached: len(eps) >= app.MaxEndpoints}
	q := ports.DeliveryQuery{Scope: s.caller.Scope(), Limit: pageSize, Offset: pageOffset(r)}
	if ep := r.URL.Query().Get("endpoint"); ep != "" {
		for _, e := range eps {
			if e.ID == ep {
				q.EndpointID, d.Endpoint = ep, ep
			}
		}
	}
	if d.Deliveries, d.Total, err = c.d.Webhooks.ListDeliveries(ctx, q); err != nil {
		return err
	}
	if d.Stats, err = c.d.Webhooks.DeliveryStats(ctx, s.caller); err != nil {
		return err
	}
	base := modeBase(s) + "/webhooks"
	if d.Endpoint != "" {
		base += "?endpoint=" + d.Endpoint + "&"
	} else {
		base += "?"
	}
	if q.Offset > 0 {
		d.PrevURL = base + "offset=" + formatInt(int64(max(q.Offset-pageSize, 0)))
	}
	if q.Offset+len(d.Deliveries) < d.Total {
		d.NextURL = base + "offset=" + formatInt(int64(q.Offset+pageSize))
	}
	return c.show(w, r, s, "webhooks", d)
}

// secretData is a secret shown once, right after it was made.
type secretData struct {
	Kind   string // "endpoint" or "key"
	ID     string
	Label  string
	Secret string
	Back   string
}

func (c *Controller) showSecret(w http.ResponseWriter, r *http.Request, s *session, d secretData) error {
	v := c.view(r, s, "secret")
	v.Title = v.T["secret_title_"+d.Kind]
	v.Data = d
	c.render(w, r, http.StatusOK, v)
	return nil
}

func (c *Controller) createEndpoint(w http.ResponseWriter, r *http.Request, s *session) error {
	page := modeBase(s) + "/webhooks"
	if err := r.ParseForm(); err != nil {
		return back(w, r, page, "err", "endpoint_invalid")
	}
	e, err := c.d.Webhooks.CreateEndpoint(r.Context(), s.caller, app.EndpointInput{URL: r.PostForm.Get("url"), Events: r.PostForm["events"]})
	var ve *domain.ValidationError
	switch {
	case errors.Is(err, app.ErrTooManyEndpoints):
		return back(w, r, page, "err", "endpoint_limit")
	case errors.Is(err, ports.ErrURLForbidden):
		return back(w, r, page, "err", "endpoint_forbidden")
	case errors.As(err, &ve) && ve.Field == domain.FieldEvents:
		return back(w, r, page, "err", "endpoint_events")
	case errors.As(err, &ve):
		return back(w, r, page, "err", "endpoint_invalid")
	case err != nil:
		return err
	}
	return c.showSecret(w, r, s, secretData{Kind: "endpoint", ID: e.ID, Label: e.URL, Secret: e.Secret, Back: page})
}

func (c *Controller) rotateEndpoint(w http.ResponseWriter, r *http.Request, s *session) error {
	id := mux.Vars(r)["id"]
	secret, err := c.d.Webhooks.RotateEndpointSecret(r.Context(), s.caller, id)
	if err != nil {
		return err
	}
	return c.showSecret(w, r, s, secretData{Kind: "endpoint", ID: id, Secret: secret, Back: modeBase(s) + "/webhooks"})
}

func (c *Controller) deleteEndpoint(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := c.d.Webhooks.DeleteEndpoint(r.Context(), s.caller, mux.Vars(r)["id"]); err != nil {
		return err
	}
	return back(w, r, modeBase(s)+"/webhooks", "done", "endpoint_deleted")
}

func (c *Controller) resendDelivery(w http.ResponseWriter, r *http.Request, s *session) error {
	_, err := c.d.Webhooks.ResendDelivery(r.Context(), s.caller, mux.Vars(r)["id"])
	to := safeNext(r.PostFormValue("back"))
	if to == Base+"/" {
		to = modeBase(s) + "/webhooks"
	}
	if errors.Is(err, app.ErrDeliveryNotResendable) {
		return back(w, r, to, "err", "resend_gone")
	}
	if err != nil {
		return err
	}
	return back(w, r, to, "done", "resent")
}

// ---- API keys ----

type keysData struct {
	Keys []ports.APIKeyRecord
	// NeedCode: a live key asks this user for a TOTP code.
	NeedCode bool
}

// modeKeys are the account's active keys of the session's mode.
func (c *Controller) modeKeys(r *http.Request, s *session) ([]ports.APIKeyRecord, error) {
	all, err := c.d.Keys.List(r.Context(), s.user)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, k := range all {
		if k.Mode == s.mode {
			out = append(out, k)
		}
	}
	return out, nil
}

func (c *Controller) keys(w http.ResponseWriter, r *http.Request, s *session) error {
	ks, err := c.modeKeys(r, s)
	if err != nil {
		return err
	}
	need, err := c.needsCode(r, s)
	if err != nil {
		return err
	}
	return c.show(w, r, s, "keys", keysData{Keys: ks, NeedCode: need})
}

func (c *Controller) issueKey(w http.ResponseWriter, r *http.Request, s *session) error {
	k, err := c.d.Keys.Issue(r.Context(), s.user, r.PostFormValue("label"), s.mode == domain.ModeTest, r.PostFormValue("code"))
	var ve *domain.ValidationError
	if errors.As(err, &ve) {
		return back(w, r, modeBase(s)+"/keys", "err", "key_label")
	}
	if key := codeError(err); key != "" {
		return back(w, r, modeBase(s)+"/keys", "err", key)
	}
	if err != nil {
		return err
	}
	return c.showSecret(w, r, s, secretData{Kind: "key", ID: k.ID, Label: k.Label, Secret: k.APIKey, Back: modeBase(s) + "/keys"})
}

// ownKey checks that {id} is an active key of the session's mode: a key
// of the other mode (or of another account) is not on this page.
func (c *Controller) ownKey(r *http.Request, s *session) (string, error) {
	id := mux.Vars(r)["id"]
	ks, err := c.modeKeys(r, s)
	if err != nil {
		return "", err
	}
	for _, k := range ks {
		if k.ID == id {
			return id, nil
		}
	}
	return "", ports.ErrNotFound
}

func (c *Controller) rotateKey(w http.ResponseWriter, r *http.Request, s *session) error {
	id, err := c.ownKey(r, s)
	if err != nil {
		return err
	}
	k, err := c.d.Keys.Rotate(r.Context(), s.user, id, nil, r.PostFormValue("code"))
	if key := codeError(err); key != "" {
		return back(w, r, modeBase(s)+"/keys", "err", key)
	}
	if err != nil {
		return err
	}
	return c.showSecret(w, r, s, secretData{Kind: "key", ID: k.ID, Label: k.Label, Secret: k.APIKey, Back: modeBase(s) + "/keys"})
}

func (c *Controller) revokeKey(w http.ResponseWriter, r *http.Request, s *session) error {
	id, err := c.ownKey(r, s)
	if err != nil {
		return err
	}
	if err := c.d.Keys.Revoke(r.Context(), s.user, id); err != nil {
		return err
	}
	return back(w, r, modeBase(s)+"/keys", "done", "key_revoked")
}

// ---- request logs ----

type logsData struct {
	Logs []ports.RequestLogEntry
}

func (c *Controller) logs(w http.ResponseWriter, r *http.Request, s *session) error {
	es, err := c.d.Keys.RequestLogs(r.Context(), s.user, "", 100)
	if err != nil {
		return err
	}
	out := es[:0]
	for _, e := range es {
		if e.Mode == string(s.mode) {
			out = append(out, e)
		}
	}
	return c.show(w, r, s, "logs", logsData{Logs: out})
}
