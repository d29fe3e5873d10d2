package dashboard

import (
	"errors"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// ---- sub-accounts (a platform's sellers) ----

// platformOnly serves h to a platform's sessions. A sub-account's login
// has no sub-accounts: every sub-account page is the 404 page for it, as
// any page that is not its own.
func (c *Controller) platformOnly(h pageHandler) pageHandler {
	return func(w http.ResponseWriter, r *http.Request, s *session) error {
		if !c.platform(s) {
			return ports.ErrNotFound
		}
		return h(w, r, s)
	}
}

// platform reports whether the session's account may have sub-accounts.
func (c *Controller) platform(s *session) bool {
	return s != nil && c.d.Subaccounts != nil && !s.caller.Account.IsSubaccount()
}

// subaccountRow is one seller of the list with its balance in the page's
// mode; the document is masked (PublicSubaccount).
type subaccountRow struct {
	Sub       domain.PublicSubaccount
	Available int64
	Pending   int64
}

// subaccountForm is what was typed in the create form, kept when it is
// refused.
type subaccountForm struct {
	Name, Document, Email, PixKey string
}

type subaccountsData struct {
	Currency domain.Currency
	Rows     []subaccountRow
	Form     subaccountForm
	NextURL  string
	FirstURL string
}

func subaccountPath(s *session, id string) string { return modeBase(s) + "/subaccounts/" + id }

func (c *Controller) subaccounts(w http.ResponseWriter, r *http.Request, s *session) error {
	return c.renderSubaccounts(w, r, s, http.StatusOK, subaccountForm{}, "")
}

// renderSubaccounts renders a page of the list with the create form
// holding form and the error errKey names ("" for none).
func (c *Controller) renderSubaccounts(w http.ResponseWriter, r *http.Request, s *session, status int, form subaccountForm, errKey string) error {
	ctx := r.Context()
	d := subaccountsData{Currency: domain.CurrencyBRL, Form: form}
	after := r.URL.Query().Get("after")
	if after != "" {
		if _, ok := domain.ParseAccountID(after); !ok {
			return ports.ErrNotFound
		}
		d.FirstURL = modeBase(s) + "/subaccounts"
	}
	as, more, err := c.d.Subaccounts.List(ctx, s.caller, pageSize, after)
	if err != nil {
		return err
	}
	for _, a := range as {
		row := subaccountRow{Sub: a.PublicSubaccount()}
		if row.Available, row.Pending, _, _, err = c.balance(r, s, a); err != nil {
			return err
		}
		d.Rows = append(d.Rows, row)
	}
	if more && len(as) > 0 {
		d.NextURL = modeBase(s) + "/subaccounts?after=" + as[len(as)-1].ID
	}
	v := c.view(r, s, "subaccounts")
	if e := r.URL.Query().Get("err"); e != "" && errKey == "" {
		errKey = e
	}
	if errKey != "" {
		v.Error = v.T["err_"+errKey]
	}
	v.Data = d
	c.render(w, r, status, v)
	return nil
}

// balance is the BRL wallet of the platform's sub-account a in the
// session's mode: available, pending, and the next release.
func (c *Controller) balance(r *http.Request, s *session, a domain.Account) (avail, pending int64, next *time.Time, nextAmount int64, err error) {
	sc, err := c.d.Subaccounts.ReadAs(s.caller, a)
	if err != nil {
		return 0, 0, nil, 0, err
	}
	ws, err := c.d.Payments.Wallets(r.Context(), sc)
	if err != nil {
		return 0, 0, nil, 0, err
	}
	for _, wl := range ws {
		if wl.Currency == domain.CurrencyBRL {
			return wl.Available, wl.Pending, wl.NextReleaseAt, wl.NextReleaseAmount, nil
		}
	}
	return 0, 0, nil, 0, nil
}

// subaccountFieldErrors names the message of a refused field of the
// create form.
var subaccountFieldErrors = map[domain.Field]string{
	domain.FieldAccountName:      "subaccount_name",
	domain.FieldSubaccountDoc:    "subaccount_document",
	domain.FieldAccountEmail:     "subaccount_email",
	domain.FieldSubaccountPixKey: "subaccount_pix_key",
}

// createSubaccount is the API's create (POST /v1/subaccounts). A refused
// form is shown again with what was typed and why.
func (c *Controller) createSubaccount(w http.ResponseWriter, r *http.Request, s *session) error {
	f := subaccountForm{Name: r.PostFormValue("name"), Document: r.PostFormValue("document"), Email: r.PostFormValue("email"),
		PixKey: r.PostFormValue("payout_pix_key")}
	a, err := c.d.Subaccounts.Create(r.Context(), s.caller, domain.SubaccountFields{Name: f.Name, Document: f.Document, Email: f.Email,
		PayoutPixKey: f.PixKey})
	var ve *domain.ValidationError
	if errors.As(err, &ve) {
		key, ok := subaccountFieldErrors[ve.Field]
		if !ok {
			key = "subaccount_invalid"
		}
		return c.renderSubaccounts(w, r, s, http.StatusUnprocessableEntity, f, key)
	}
	if err != nil {
		return err
	}
	return back(w, r, subaccountPath(s, a.ID), "done", "subaccount_created")
}

// ---- sub-account detail ----

// invitationsShown is how many of a sub-account's newest invitations its
// page lists.
const invitationsShown = 10

type subaccountData struct {
	Sub      domain.PublicSubaccount
	Live     bool
	Currency domain.Currency
	// The sub-account's BRL wallet in the page's mode.
	Available, Pending int64
	NextReleaseAt      *time.Time
	NextReleaseAmount  int64
	// Charges are its latest charges (created by the platform acting for
	// it, or with its own keys); Transfers the split shares it was
	// credited, each from one of the platform's charges.
	Charges   []*domain.Charge
	Transfers []domain.PublicTransfer
	// Invitations are its newest login invitations, without their links.
	Invitations     []domain.PublicInvitation
	MoreInvitations bool
	Logins          bool
}

// subaccountByPath reads {id} as one of the platform's sub-accounts; any
// other id is 404.
func (c *Controller) subaccountByPath(r *http.Request, s *session) (*domain.Account, error) {
	id, ok := domain.ParseAccountID(mux.Vars(r)["id"])
	if !ok {
		return nil, ports.ErrNotFound
	}
	return c.d.Subaccounts.Get(r.Context(), s.caller, id)
}

func (c *Controller) subaccount(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx := r.Context()
	a, err := c.subaccountByPath(r, s)
	if err != nil {
		return err
	}
	d := subaccountData{Sub: a.PublicSubaccount(), Live: a.DisabledAt == nil, Currency: domain.CurrencyBRL, Logins: c.d.Logins != nil}
	if d.Available, d.Pending, d.NextReleaseAt, d.NextReleaseAmount, err = c.balance(r, s, *a); err != nil {
		return err
	}
	sc, err := c.d.Subaccounts.ReadAs(s.caller, *a)
	if err != nil {
		return err
	}
	if d.Charges, _, err = c.d.Payments.Charges().List(ctx, ports.ChargeQuery{Scope: sc.Scope(), Limit: 10}); err != nil {
		return err
	}
	if d.Transfers, err = c.d.Reads.Transfers(ctx, sc, 10); err != nil {
		return err
	}
	if c.d.Logins != nil {
		is, more, err := c.d.Logins.Invitations(ctx, s.caller, a.ID, invitationsShown)
		if err != nil {
			return err
		}
		now := c.d.Logins.Now()
		for _, i := range is {
			d.Invitations = append(d.Invitations, i.Public(now))
		}
		d.MoreInvitations = more
	}
	v := c.view(r, s, "subaccount")
	v.Title = a.Name
	if e := r.URL.Query().Get("err"); e != "" {
		v.Error = v.T["err_"+e]
	}
	v.Data = d
	c.render(w, r, http.StatusOK, v)
	return nil
}

// disableSubaccount is the API's disable, after the form's confirmation:
// final, the sub-account's logins and keys stop, its data stays.
func (c *Controller) disableSubaccount(w http.ResponseWriter, r *http.Request, s *session) error {
	a, err := c.subaccountByPath(r, s)
	if err != nil {
		return err
	}
	if r.PostFormValue("confirm") != "yes" {
		return back(w, r, subaccountPath(s, a.ID), "err", "subaccount_confirm")
	}
	if _, err := c.d.Subaccounts.Disable(r.Context(), s.caller, a.ID); err != nil {
		return err
	}
	return back(w, r, subaccountPath(s, a.ID), "done", "subaccount_disabled")
}

// inviteData is an invitation's link, shown once.
type inviteData struct {
	Email string
	URL   string
	Back  string
}

// inviteLogin invites a dashboard login for the sub-account and shows its
// link once (never stored in the page's address or a cookie).
func (c *Controller) inviteLogin(w http.ResponseWriter, r *http.Request, s *session) error {
	if c.d.Logins == nil {
		return ports.ErrNotFound
	}
	a, err := c.subaccountByPath(r, s)
	if err != nil {
		return err
	}
	detail := subaccountPath(s, a.ID)
	sent, err := c.d.Logins.Invite(r.Context(), s.caller, a.ID, r.PostFormValue("email"))
	var ve *domain.ValidationError
	switch {
	case errors.As(err, &ve):
		return back(w, r, detail, "err", "invite_email")
	case errors.Is(err, domain.ErrSubaccountDisabled):
		return back(w, r, detail, "err", "invite_disabled")
	case err != nil:
		return err
	}
	v := c.view(r, s, "invited")
	v.Data = inviteData{Email: sent.Invitation.Email, URL: sent.URL, Back: detail}
	c.render(w, r, http.StatusOK, v)
	return nil
}

// ---- a split charge's splits ----

// splitRow is one split of a platform's charge as its page shows it.
type splitRow struct {
	domain.PublicSplit
	// Name is the sub-account's name ("" when it cannot be read).
	Name string
}

// chargeSplits are the splits of the platform's charge ch with their
// sub-accounts' names, and who bears the fees; nil for a charge without
// splits.
func (c *Controller) chargeSplits(r *http.Request, caller app.Caller, ch *domain.Charge) ([]splitRow, domain.FeePayer, error) {
	if ch.Splits() == nil {
		return nil, "", nil
	}
	pub := ch.Public(domain.Links{})
	out := make([]splitRow, len(pub.Splits))
	for i, sp := range pub.Splits {
		out[i] = splitRow{PublicSplit: sp}
		if c.d.Subaccounts == nil {
			continue
		}
		a, err := c.d.Subaccounts.Get(r.Context(), caller, sp.Account)
		switch {
		case err == nil:
			out[i].Name = a.Name
		case !errors.Is(err, ports.ErrNotFound):
			return nil, "", err
		}
	}
	var fp domain.FeePayer
	if pub.FeePayer != nil {
		fp = *pub.FeePayer
	}
	return out, fp, nil
}
