package app

import (
	"context"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// LoginAdmin is what an operator does to a dashboard login from the
// command line (`quitad account password`): a new password, TOTP off for
// an owner who lost the authenticator and its recovery codes, and every
// session of the login ended.
type LoginAdmin struct {
	users    ports.UserStore
	security ports.UserSecurityStore
	hasher   ports.PasswordHasher
	denylist ports.TokenDenylist
	clock    ports.Clock
}

// NewLoginAdmin wires the operator's login administration.
func NewLoginAdmin(users ports.UserStore, security ports.UserSecurityStore, hasher ports.PasswordHasher, denylist ports.TokenDenylist,
	clock ports.Clock,
) *LoginAdmin {
	return &LoginAdmin{users: users, security: security, hasher: hasher, denylist: denylist, clock: clock}
}

// LoginReset is what Reset did.
type LoginReset struct {
	UserID          string `json:"userId"`
	Email           string `json:"email"`
	PasswordChanged bool   `json:"passwordChanged"`
	TOTPDisabled    bool   `json:"totpDisabled"`
	SessionsEnded   bool   `json:"sessionsEnded"`
}

// Reset sets the password of the login of email (when password is not
// empty) and turns its TOTP off (when disableTOTP is set), then ends every
// session of the login issued until now, on every process — a login in
// this very second included. One of the two must be asked for. The
// password follows the rules of a new one (MinPasswordLen to
// MaxPasswordBytes, naming domain.FieldPassword); ErrNotFound for an
// unknown e-mail.
func (a *LoginAdmin) Reset(ctx context.Context, email, password string, disableTOTP bool) (LoginReset, error) {
	switch {
	case password == "" && !disableTOTP:
		return LoginReset{}, domain.Invalid(domain.FieldPassword, "a new %s is required", domain.FieldPassword)
	case password != "" && len(password) < MinPasswordLen:
		return LoginReset{}, domain.Invalid(domain.FieldPassword, "%s must be at least %d characters", domain.FieldPassword, MinPasswordLen)
	case len(password) > MaxPasswordBytes:
		return LoginReset{}, domain.Invalid(domain.FieldPassword, "%s must be at most %d bytes", domain.FieldPassword, MaxPasswordBytes)
	}
	var user *ports.User
	out := LoginReset{}
	if password != "" {
		hash, err := a.hasher.Hash(password)
		if err != nil {
			return LoginReset{}, err
		}
		if user, err = a.security.SetPassword(ctx, email, hash); err != nil {
			return LoginReset{}, err
		}
		out.PasswordChanged = true
	} else {
		var err error
		if user, err = a.users.GetUserByEmail(ctx, email); err != nil {
			return LoginReset{}, err
		}
	}
	out.UserID, out.Email = user.ID, user.Email
	if disableTOTP {
		if err := a.security.DisableTOTP(ctx, user.ID); err != nil {
			return out, err
		}
		out.TOTPDisabled = true
	}
	if err := a.denylist.DenyUserTokens(ctx, user.ID, a.clock.Now().Truncate(time.Second)); err != nil {
		return out, err
	}
	out.SessionsEnded = true
	return out, nil
}
