package domain

import (
	"errors"
	"time"
)

// PrefixInvitation is the prefix of a sub-account login invitation's id.
const PrefixInvitation = "inv_"

// InvitationTTL is how long an invitation can be accepted.
const InvitationTTL = 7 * 24 * time.Hour

// Errors of accepting an invitation.
var (
	// ErrInvitationExpired: the invitation's seven days are over.
	ErrInvitationExpired = errors.New("the invitation has expired")
	// ErrInvitationUsed: the invitation was accepted already; each is
	// accepted once.
	ErrInvitationUsed = errors.New("the invitation was already used")
)

// Invitation asks someone to become a dashboard user of a sub-account,
// sent by its platform. Its token is a secret only the link carries; the
// invitation keeps its hash.
type Invitation struct {
	ID string
	// AccountID is the sub-account the login is for, PlatformID its
	// platform.
	AccountID  string
	PlatformID string
	// Email is the login's e-mail, fixed by the platform.
	Email     string
	TokenHash string
	CreatedAt time.Time
	ExpiresAt time.Time
	// AcceptedAt and UserID are set once, when it is accepted.
	AcceptedAt *time.Time
	UserID     string
}

// NewInvitation validates an invitation of sub, a live sub-account, for
// email. ErrSubaccountDisabled for a disabled sub-account; an invalid
// e-mail names FieldAccountEmail.
func NewInvitation(id string, sub Account, email, tokenHash string, now time.Time) (Invitation, error) {
	if sub.DisabledAt != nil {
		return Invitation{}, ErrSubaccountDisabled
	}
	email, err := subaccountEmail(email)
	if err != nil {
		return Invitation{}, err
	}
	now = now.UTC()
	return Invitation{ID: id, AccountID: sub.ID, PlatformID: sub.ParentAccountID, Email: email, TokenHash: tokenHash,
		CreatedAt: now, ExpiresAt: now.Add(InvitationTTL)}, nil
}

// Usable reports why the invitation cannot be accepted at now, nil when
// it can: ErrInvitationUsed once accepted, ErrInvitationExpired from its
// expiry on.
func (i Invitation) Usable(now time.Time) error {
	switch {
	case i.AcceptedAt != nil:
		return ErrInvitationUsed
	case !now.Before(i.ExpiresAt):
		return ErrInvitationExpired
	}
	return nil
}

// Invitation statuses on the wire.
const (
	InvitationPending  = "pending"
	InvitationAccepted = "accepted"
	InvitationExpired  = "expired"
)

// Status is where the invitation stands at now.
func (i Invitation) Status(now time.Time) string {
	switch err := i.Usable(now); {
	case errors.Is(err, ErrInvitationUsed):
		return InvitationAccepted
	case errors.Is(err, ErrInvitationExpired):
		return InvitationExpired
	}
	return InvitationPending
}

// PublicInvitation is an invitation as the API shows it to the platform.
// URL, the link with the token, is set only in the answer that created
// it.
type PublicInvitation struct {
	ID         string     `json:"id"`
	Object     string     `json:"object"`
	Account    string     `json:"account"`
	Email      string     `json:"email"`
	Status     string     `json:"status"`
	CreatedAt  Timestamp  `json:"created_at"`
	ExpiresAt  Timestamp  `json:"expires_at"`
	AcceptedAt *Timestamp `json:"accepted_at"`
	URL        string     `json:"url,omitempty"`
}

// Public renders the invitation at now, without its link.
func (i Invitation) Public(now time.Time) PublicInvitation {
	out := PublicInvitation{ID: i.ID, Object: "subaccount_invitation", Account: i.AccountID, Email: i.Email,
		Status: i.Status(now), CreatedAt: Timestamp(i.CreatedAt), ExpiresAt: Timestamp(i.ExpiresAt)}
	if i.AcceptedAt != nil {
		ts := Timestamp(*i.AcceptedAt)
		out.AcceptedAt = &ts
	}
	return out
}
