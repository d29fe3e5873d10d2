package dashboard

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// acceptData is the page where an invitee sets the password of a
// sub-account's login.
type acceptData struct {
	// Action is the form's address (the invitation's own).
	Action   string
	Email    string
	Account  string
	Platform string
	Error    string
}

// invitePage shows an invitation that can be accepted: whose login it
// makes, and the password form. An unknown, used or expired invitation
// (or one of a sub-account disabled since) is refused with a page that
// says what to do.
func (c *Controller) invitePage(w http.ResponseWriter, r *http.Request) {
	if c.d.Logins == nil {
		c.notFound(w, r)
		return
	}
	p, err := c.d.Logins.Invitation(r.Context(), mux.Vars(r)["token"])
	if err != nil {
		c.inviteRefused(w, r, err)
		return
	}
	c.renderAccept(w, r, http.StatusOK, acceptFor(r, p, ""))
}

func acceptFor(r *http.Request, p app.PendingInvitation, errMsg string) acceptData {
	return acceptData{Action: r.URL.Path, Email: p.Invitation.Email, Account: p.Account, Platform: p.Platform, Error: errMsg}
}

// renderAccept renders the accept page with a fresh double-submit token,
// as the login form has (no session yet).
func (c *Controller) renderAccept(w http.ResponseWriter, r *http.Request, status int, d acceptData) {
	tok, err := randomToken()
	if err != nil {
		c.fail(w, r, err)
		return
	}
	c.setCookie(w, r, loginCookie, tok, time.Now().Add(time.Hour))
	v := c.view(r, nil, "invite")
	// The language links lead to the login page: the invitation's
	// address (its token) is not repeated on the page.
	v.Path = Base + "/login"
	v.CSRF = tok
	v.Data = d
	c.render(w, r, status, v)
}

// inviteRefused answers an invitation that cannot be accepted.
func (c *Controller) inviteRefused(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, ports.ErrNotFound):
		c.errorPage(w, r, http.StatusNotFound, "err_invite_unknown")
	case errors.Is(err, domain.ErrInvitationUsed):
		c.errorPage(w, r, http.StatusGone, "err_invite_used")
	case errors.Is(err, domain.ErrInvitationExpired):
		c.errorPage(w, r, http.StatusGone, "err_invite_expired")
	case errors.Is(err, domain.ErrSubaccountDisabled):
		c.errorPage(w, r, http.StatusGone, "err_invite_subaccount_disabled")
	default:
		c.fail(w, r, err)
	}
}

// acceptInvite sets the password: the login is made, the invitation is
// used up, and the invitee is logged in to the sub-account's dashboard.
func (c *Controller) acceptInvite(w http.ResponseWriter, r *http.Request) {
	if c.d.Logins == nil {
		c.notFound(w, r)
		return
	}
	if !c.readForm(w, r, maxLoginForm) {
		return
	}
	ck, err := c.cookie(r, loginCookie)
	if err != nil || !sameOrigin(r) ||
		subtle.ConstantTimeCompare([]byte(r.PostFormValue(csrfField)), []byte(ck.Value)) != 1 {
		c.forbidden(w, r)
		return
	}
	ctx := r.Context()
	token := mux.Vars(r)["token"]
	p, err := c.d.Logins.Invitation(ctx, token)
	if err != nil {
		c.inviteRefused(w, r, err)
		return
	}
	msgs := c.msgs(r)
	password := r.PostFormValue("password")
	if password != r.PostFormValue("password_confirm") {
		c.renderAccept(w, r, http.StatusUnprocessableEntity, acceptFor(r, p, msgs["invite_mismatch"]))
		return
	}
	u, err := c.d.Logins.Accept(ctx, token, password)
	var ve *domain.ValidationError
	switch {
	case errors.As(err, &ve):
		c.renderAccept(w, r, http.StatusUnprocessableEntity, acceptFor(r, p, msgs["invite_password"]))
		return
	case errors.Is(err, app.ErrLoginEmailTaken):
		c.renderAccept(w, r, http.StatusConflict, acceptFor(r, p, msgs["invite_email_taken"]))
		return
	case err != nil:
		c.inviteRefused(w, r, err)
		return
	}
	c.clearCookie(w, r, loginCookie)
	// The login exists now; should the session not start (the login
	// throttles), the invitee logs in by hand.
	sess, err := c.d.Sessions.Login(ctx, u.Email, password, c.cfg.ClientIP(r))
	if err != nil {
		c.log.WarnContext(ctx, "dashboard: login after an accepted invitation", "user", u.ID, "err", err)
		http.Redirect(w, r, Base+"/login", http.StatusSeeOther)
		return
	}
	c.setCookie(w, r, sessionCookie, sess.Token, time.Time(sess.ExpiresAt))
	http.Redirect(w, r, Base+"/live/?done=invite_accepted", http.StatusSeeOther)
}
