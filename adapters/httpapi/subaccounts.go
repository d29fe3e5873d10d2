package httpapi

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// SubaccountsController serves /v1/subaccounts: a platform's sellers
// (docs/marketplaces.md).
type SubaccountsController struct {
	subs *app.SubaccountService
	// logins serves the invitations routes; nil serves none.
	logins *app.SubaccountLogins
}

// Routes registers the sub-account routes, whose errors name fields in
// subaccountsParams. Their POSTs honour an Idempotency-Key through the
// keyed-writes middleware.
func (c *SubaccountsController) Routes(r *mux.Router) {
	pr := paramsRouter{Router: r, params: subaccountsParams}
	pr.HandleFunc("/subaccounts", handle(c.create)).Methods(http.MethodPost).Name("subaccounts.create")
	pr.HandleFunc("/subaccounts", handle(c.list)).Methods(http.MethodGet).Name("subaccounts.list")
	pr.HandleFunc("/subaccounts/{id}", onSubaccount(c.get)).Methods(http.MethodGet).Name("subaccounts.get")
	pr.HandleFunc("/subaccounts/{id}", onSubaccount(c.update)).Methods(http.MethodPost).Name("subaccounts.update")
	pr.HandleFunc("/subaccounts/{id}/disable", onSubaccount(c.disable)).Methods(http.MethodPost).Name("subaccounts.disable")
	if c.logins != nil {
		pr.HandleFunc("/subaccounts/{id}/invitations", onSubaccount(c.invite)).Methods(http.MethodPost).Name("subaccounts.invite")
		pr.HandleFunc("/subaccounts/{id}/invitations", onSubaccount(c.invitations)).Methods(http.MethodGet).Name("subaccounts.invitations")
	}
}

// onSubaccount resolves {id} (acct_…; anything else is 404 before h runs)
// and the caller, then answers as handle does.
func onSubaccount(h chargeFunc) http.HandlerFunc {
	return handle(func(w http.ResponseWriter, r *http.Request) (any, error) {
		id, ok := domain.ParseAccountID(mux.Vars(r)["id"])
		if !ok {
			return nil, ports.ErrNotFound
		}
		return h(w, r, callerFrom(r.Context()), id)
	})
}

type createSubaccountRequest struct {
	Name         string `json:"name"`
	Document     string `json:"document"`
	Email        string `json:"email"`
	PayoutPixKey string `json:"payout_pix_key"`
	AutoPayout   bool   `json:"auto_payout"`
}

func (c *SubaccountsController) create(w http.ResponseWriter, r *http.Request) (any, error) {
	var req createSubaccountRequest
	if _, err := readJSON(w, r, true, &req); err != nil {
		return nil, err
	}
	a, err := c.subs.Create(r.Context(), callerFrom(r.Context()),
		domain.SubaccountFields{Name: req.Name, Document: req.Document, Email: req.Email, PayoutPixKey: req.PayoutPixKey,
			AutoPayout: req.AutoPayout})
	if err != nil {
		return nil, err
	}
	return created(a.PublicSubaccount())
}

type updateSubaccountRequest struct {
	Name         *string `json:"name"`
	Email        *string `json:"email"`
	PayoutPixKey *string `json:"payout_pix_key"`
	AutoPayout   *bool   `json:"auto_payout"`
}

func (c *SubaccountsController) update(w http.ResponseWriter, r *http.Request, caller app.Caller, id string) (any, error) {
	var req updateSubaccountRequest
	if _, err := readJSON(w, r, true, &req); err != nil {
		return nil, err
	}
	a, err := c.subs.Update(r.Context(), caller, id, domain.SubaccountChange(req))
	if err != nil {
		return nil, err
	}
	return a.PublicSubaccount(), nil
}

func (c *SubaccountsController) get(_ http.ResponseWriter, r *http.Request, caller app.Caller, id string) (any, error) {
	a, err := c.subs.Get(r.Context(), caller, id)
	if err != nil {
		return nil, err
	}
	return a.PublicSubaccount(), nil
}

func (c *SubaccountsController) disable(w http.ResponseWriter, r *http.Request, caller app.Caller, id string) (any, error) {
	if err := noBody(w, r); err != nil {
		return nil, err
	}
	a, err := c.subs.Disable(r.Context(), caller, id)
	if err != nil {
		return nil, err
	}
	return a.PublicSubaccount(), nil
}

type subaccountListResponse struct {
	Object     string                    `json:"object"`
	Data       []domain.PublicSubaccount `json:"data"`
	HasMore    bool                      `json:"has_more"`
	NextCursor *string                   `json:"next_cursor"`
}

// list serves a page of the platform's sub-accounts, newest first, with a
// cursor (starting_after); documents are masked as everywhere.
func (c *SubaccountsController) list(_ http.ResponseWriter, r *http.Request) (any, error) {
	v := r.URL.Query()
	limit, err := intParam(v.Get("limit"), "limit", 1, 100, 25)
	if err != nil {
		return nil, err
	}
	after := v.Get("starting_after")
	if after != "" {
		if _, ok := domain.ParseAccountID(after); !ok {
			return nil, badRequest("starting_after", "parameter_invalid", "starting_after must be a sub-account id (acct_...)")
		}
	}
	as, more, err := c.subs.List(r.Context(), callerFrom(r.Context()), limit, after)
	if err != nil {
		if after != "" && isNotFound(err) {
			err = badRequest("starting_after", "parameter_invalid", "starting_after is not a sub-account of this account")
		}
		return nil, err
	}
	out := subaccountListResponse{Object: "list", Data: make([]domain.PublicSubaccount, 0, len(as)), HasMore: more}
	for _, a := range as {
		out.Data = append(out.Data, a.PublicSubaccount())
	}
	if more && len(as) > 0 {
		next := as[len(as)-1].ID
		out.NextCursor = &next
	}
	return out, nil
}

type inviteRequest struct {
	Email string `json:"email"`
}

// invite invites a dashboard login for the sub-account: the answer is the
// one place (besides the server's log) that holds the link with its
// token.
func (c *SubaccountsController) invite(w http.ResponseWriter, r *http.Request, caller app.Caller, id string) (any, error) {
	var req inviteRequest
	if _, err := readJSON(w, r, true, &req); err != nil {
		return nil, err
	}
	sent, err := c.logins.Invite(r.Context(), caller, id, req.Email)
	if err != nil {
		return nil, err
	}
	out := sent.Invitation.Public(c.logins.Now())
	out.URL = sent.URL
	return created(out)
}

type invitationListResponse struct {
	Object  string                    `json:"object"`
	Data    []domain.PublicInvitation `json:"data"`
	HasMore bool                      `json:"has_more"`
}

// invitations lists the sub-account's newest invitations (limit, 1..100,
// 25), never with their links.
func (c *SubaccountsController) invitations(_ http.ResponseWriter, r *http.Request, caller app.Caller, id string) (any, error) {
	limit, err := intParam(r.URL.Query().Get("limit"), "limit", 1, 100, 25)
	if err != nil {
		return nil, err
	}
	is, more, err := c.logins.Invitations(r.Context(), caller, id, limit)
	if err != nil {
		return nil, err
	}
	now := c.logins.Now()
	out := invitationListResponse{Object: "list", Data: make([]domain.PublicInvitation, 0, len(is)), HasMore: more}
	for _, i := range is {
		out.Data = append(out.Data, i.Public(now))
	}
	return out, nil
}
