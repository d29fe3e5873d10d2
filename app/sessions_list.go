package app

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"unicode"

	"github.com/quitapix/quita/ports"
)

// MaxListedSessions is the most sessions a user's list shows.
const MaxListedSessions = 50

// UserSession is one of the user's live sessions; Current is the one
// asking.
type UserSession struct {
	ports.SessionRecord
	Current bool
}

// ListSessions lists the user's live sessions (neither expired nor
// ended), newest first. Sessions issued before they were recorded are
// not listed; "end all other sessions" ends them too.
func (s *SessionService) ListSessions(ctx context.Context, u DashboardUser) ([]UserSession, error) {
	rs, err := s.sessions.ListSessions(ctx, u.UserID, s.clock.Now(), MaxListedSessions)
	if err != nil {
		return nil, err
	}
	out := make([]UserSession, len(rs))
	for i, r := range rs {
		out[i] = UserSession{SessionRecord: r, Current: r.TokenID == u.TokenID}
	}
	return out, nil
}

// RevokeSession ends one of the user's sessions (the asking one too): its
// token is refused from the next request on, on every process.
// ErrNotFound for an id that is not one of the user's sessions.
func (s *SessionService) RevokeSession(ctx context.Context, u DashboardUser, tokenID string) error {
	if isChallenge(tokenID) {
		return ports.ErrNotFound
	}
	rec, err := s.sessions.GetSession(ctx, u.UserID, tokenID)
	if err != nil {
		return err
	}
	return s.denylist.DenyToken(ctx, rec.TokenID, rec.ExpiresAt)
}

// EndOtherSessions ends every session of the user but the asking one —
// those listed, and any token issued before it — and reports how many
// listed sessions it ended.
func (s *SessionService) EndOtherSessions(ctx context.Context, u DashboardUser) (int, error) {
	now := s.clock.Now()
	keep := u.IssuedAt
	if keep.IsZero() {
		keep = now
	}
	return s.sessions.EndOtherSessions(ctx, u.UserID, u.TokenID, keep, now)
}

// maxAgentBytes bounds the User-Agent a session keeps.
const maxAgentBytes = 256

// trimAgent keeps the printable part of a User-Agent, cut to
// maxAgentBytes on a character boundary.
func trimAgent(ua string) string {
	var b strings.Builder
	for _, r := range ua {
		if !unicode.IsPrint(r) {
			continue
		}
		if b.Len()+len(string(r)) > maxAgentBytes {
			break
		}
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

// maskClient is the address a session keeps: an IPv4 address's /24 and
// an IPv6 address's /48, as "192.0.2.x" and "2001:db8:1::/48" — enough to
// tell networks apart, not to name a subscriber. Anything else is "".
func maskClient(client string) string {
	a, err := netip.ParseAddr(client)
	if err != nil {
		return ""
	}
	a = a.Unmap()
	if a.Is4() {
		b := a.As4()
		return fmt.Sprintf("%d.%d.%d.x", b[0], b[1], b[2])
	}
	p, err := a.WithZone("").Prefix(48)
	if err != nil {
		return ""
	}
	return p.String()
}
