package domain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

// An invitation is good for InvitationTTL from its creation and once: at
// its expiry it has expired, once accepted it is used whatever the time;
// a disabled sub-account gets none, and the e-mail is checked.
func TestInvitation(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 23, 12, 0, 0, 0, time.UTC)
	sub := domain.Account{ID: "acct_sub", ParentAccountID: "acct_platform"}
	inv, err := domain.NewInvitation("inv_1", sub, "vendas@example.com", "hash", now)
	if err != nil {
		t.Fatal(err)
	}
	if inv.PlatformID != "acct_platform" || inv.AccountID != "acct_sub" || !inv.ExpiresAt.Equal(now.Add(7*24*time.Hour)) {
		t.Fatalf("invitation %+v", inv)
	}
	for _, tt := range []struct {
		at     time.Time
		err    error
		status string
	}{
		{now, nil, domain.InvitationPending},
		{inv.ExpiresAt.Add(-time.Nanosecond), nil, domain.InvitationPending},
		{inv.ExpiresAt, domain.ErrInvitationExpired, domain.InvitationExpired},
	} {
		if err := inv.Usable(tt.at); !errors.Is(err, tt.err) || inv.Status(tt.at) != tt.status {
			t.Errorf("at %s: %v %s, want %v %s", tt.at, err, inv.Status(tt.at), tt.err, tt.status)
		}
	}
	accepted := now.Add(time.Hour)
	inv.AcceptedAt = &accepted
	for _, at := range []time.Time{now, inv.ExpiresAt.Add(time.Hour)} {
		if err := inv.Usable(at); !errors.Is(err, domain.ErrInvitationUsed) || inv.Status(at) != domain.InvitationAccepted {
			t.Errorf("accepted, at %s: %v", at, err)
		}
	}
	if p := inv.Public(now); p.AcceptedAt == nil || p.URL != "" || p.Object != "subaccount_invitation" {
		t.Errorf("public %+v", p)
	}

	disabled := sub
	disabled.DisabledAt = &now
	if _, err := domain.NewInvitation("inv_2", disabled, "vendas@example.com", "hash", now); !errors.Is(err, domain.ErrSubaccountDisabled) {
		t.Errorf("disabled sub-account: %v", err)
	}
	for _, email := range []string{"", "vendas", "vendas@example"} {
		var ve *domain.ValidationError
		if _, err := domain.NewInvitation("inv_3", sub, email, "hash", now); !errors.As(err, &ve) || ve.Field != domain.FieldAccountEmail {
			t.Errorf("e-mail %q: %v", email, err)
		}
	}
}
