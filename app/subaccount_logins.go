package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// ErrLoginEmailTaken: the invited e-mail already has a dashboard login
// (each address logs in to one account).
var ErrLoginEmailTaken = errors.New("the e-mail already has a dashboard login")

// InvitationsConfig tunes sub-account login invitations.
type InvitationsConfig struct {
	// LinkBase is what an invitation's link is: LinkBase followed by the
	// token (quitad: the public origin and /dashboard/invite/).
	LinkBase string
}

// SubaccountLogins lets a platform invite dashboard logins for its
// sub-accounts, and an invitee accept one: the invitation's link carries
// a one-time token, stored only as its hash, good for InvitationTTL; the
// login it makes is a dashboard user of the sub-account, which sees the
// sub-account's own data only.
type SubaccountLogins struct {
	invites  ports.InvitationStore
	subs     ports.SubaccountStore
	accounts ports.AccountStore
	hasher   ports.PasswordHasher
	clock    ports.Clock
	ids      ports.IDGenerator
	log      *slog.Logger
	cfg      InvitationsConfig
}

// NewSubaccountLogins wires the invitations of sub-account logins.
func NewSubaccountLogins(invites ports.InvitationStore, subs ports.SubaccountStore, accounts ports.AccountStore,
	hasher ports.PasswordHasher, clock ports.Clock, ids ports.IDGenerator, log *slog.Logger, cfg InvitationsConfig,
) *SubaccountLogins {
	return &SubaccountLogins{invites: invites, subs: subs, accounts: accounts, hasher: hasher, clock: clock, ids: ids, log: log, cfg: cfg}
}

// SentInvitation is a new invitation with its link, which holds the token:
// the link is shown once, to the platform that asked for it.
type SentInvitation struct {
	Invitation domain.Invitation
	URL        string
}

// invitationTokenLen is the length of a token: 32 random bytes in
// unpadded base64url.
const invitationTokenLen = 43

// Invite invites email to log in to the dashboard as the caller's
// sub-account id. The link is written to the log at info level (the way
// to hand it over where no mail is sent) and returned once. ErrNotFound
// for an account that is not a sub-account of the caller;
// domain.ErrSubaccountDisabled for a disabled one; an invalid e-mail
// names domain.FieldAccountEmail.
func (s *SubaccountLogins) Invite(ctx context.Context, caller Caller, id, email string) (SentInvitation, error) {
	sub, err := s.subs.GetSubaccount(ctx, caller.Account.ID, id)
	if err != nil {
		return SentInvitation{}, err
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return SentInvitation{}, err
	}
	token := base64.RawURLEncoding.EncodeToString(b[:])
	raw, err := s.ids.NewID()
	if err != nil {
		return SentInvitation{}, err
	}
	inv, err := domain.NewInvitation(domain.PrefixInvitation+raw, *sub, strings.TrimSpace(email), invitationHash(token), s.clock.Now())
	if err != nil {
		return SentInvitation{}, err
	}
	if err := s.invites.CreateInvitation(ctx, inv); err != nil {
		return SentInvitation{}, err
	}
	link := s.cfg.LinkBase + token
	s.log.InfoContext(ctx, "sub-account login invited: hand this link to the invitee (single use, 7 days)",
		"invitation", inv.ID, "account", inv.AccountID, "link", link)
	return SentInvitation{Invitation: inv, URL: link}, nil
}

// Invitations lists the newest invitations (at most limit) of the
// caller's sub-account id and whether more exist. ErrNotFound as Invite.
func (s *SubaccountLogins) Invitations(ctx context.Context, caller Caller, id string, limit int) ([]domain.Invitation, bool, error) {
	if _, err := s.subs.GetSubaccount(ctx, caller.Account.ID, id); err != nil {
		return nil, false, err
	}
	return s.invites.ListInvitations(ctx, id, limit)
}

// Now is the service's clock: the instant an invitation's status is
// judged at.
func (s *SubaccountLogins) Now() time.Time { return s.clock.Now() }

// PendingInvitation is an invitation that can be accepted, with what the
// invitee is shown: the sub-account's name and its platform's.
type PendingInvitation struct {
	Invitation domain.Invitation
	Account    string
	Platform   string
}

// Invitation reads the invitation of token for its accept page.
// ErrNotFound for an unknown or malformed token; domain.ErrInvitationUsed,
// domain.ErrInvitationExpired; domain.ErrSubaccountDisabled when the
// platform disabled the sub-account since.
func (s *SubaccountLogins) Invitation(ctx context.Context, token string) (PendingInvitation, error) {
	if !validInvitationToken(token) {
		return PendingInvitation{}, ports.ErrNotFound
	}
	inv, sub, err := s.invites.InvitationByToken(ctx, invitationHash(token))
	if err != nil {
		return PendingInvitation{}, err
	}
	if err := acceptable(*inv, *sub, s.clock.Now()); err != nil {
		return PendingInvitation{}, err
	}
	platform, err := s.accounts.GetAccount(ctx, sub.ParentAccountID)
	if err != nil {
		return PendingInvitation{}, err
	}
	return PendingInvitation{Invitation: *inv, Account: sub.Name, Platform: platform.Name}, nil
}

// acceptable is why inv of sub cannot be accepted at now, nil when it
// can.
func acceptable(inv domain.Invitation, sub domain.Account, now time.Time) error {
	if err := inv.Usable(now); err != nil {
		return err
	}
	if sub.DisabledAt != nil {
		return domain.ErrSubaccountDisabled
	}
	return nil
}

// Accept accepts the invitation of token with password: a dashboard user
// of the sub-account with the invitation's e-mail, the password hashed as
// every dashboard password is; the invitation cannot be used again. The
// errors of Invitation; a password shorter than MinPasswordLen or longer
// than MaxPasswordBytes names domain.FieldPassword; ErrLoginEmailTaken.
func (s *SubaccountLogins) Accept(ctx context.Context, token, password string) (ports.User, error) {
	p, err := s.Invitation(ctx, token)
	if err != nil {
		return ports.User{}, err
	}
	switch {
	case len(password) < MinPasswordLen:
		return ports.User{}, domain.Invalid(domain.FieldPassword, "%s must be at least %d characters", domain.FieldPassword, MinPasswordLen)
	case len(password) > MaxPasswordBytes:
		return ports.User{}, domain.Invalid(domain.FieldPassword, "%s must be at most %d bytes", domain.FieldPassword, MaxPasswordBytes)
	}
	hash, err := s.hasher.Hash(password)
	if err != nil {
		return ports.User{}, err
	}
	raw, err := s.ids.NewID()
	if err != nil {
		return ports.User{}, err
	}
	now := s.clock.Now()
	u := ports.User{ID: domain.PrefixUser + raw, AccountID: p.Invitation.AccountID, Email: strings.ToLower(p.Invitation.Email),
		PasswordHash: hash, CreatedAt: now}
	err = s.invites.AcceptInvitation(ctx, invitationHash(token), u, now, func(inv domain.Invitation, sub domain.Account) error {
		return acceptable(inv, sub, now)
	})
	if errors.Is(err, ports.ErrDuplicate) {
		return ports.User{}, ErrLoginEmailTaken
	}
	if err != nil {
		return ports.User{}, err
	}
	s.log.InfoContext(ctx, "sub-account login invitation accepted", "invitation", p.Invitation.ID, "account", u.AccountID, "user", u.ID)
	return u, nil
}

// invitationHash is what the store keeps of a token: its SHA-256 in hex.
// A token is 256 random bits, so a fast hash is enough.
func invitationHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// validInvitationToken is the shape of a token: invitationTokenLen
// characters of the base64url alphabet.
func validInvitationToken(t string) bool {
	if len(t) != invitationTokenLen {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			return false
		}
	}
	return true
}
