package app_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
)

// A TOTP code is accepted for the clock's step and one step either side,
// each step once, and never a step at or before the last one accepted.
func TestTOTPWindowAndReplay(t *testing.T) {
	t.Parallel()
	h := newSecurityHarness(t, app.SessionConfig{MaxFailures: 100})
	ctx := context.Background()
	_, u := h.login(t, "192.0.2.1", "")
	secret, _ := h.enable(t, u)
	h.nextStep() // the step before the clock's is later than the confirming one

	for _, tc := range []struct {
		name   string
		offset int64
		want   error
	}{
		{"two steps back", -2, app.ErrInvalidSecondFactor},
		{"two steps ahead", 2, app.ErrInvalidSecondFactor},
		{"the step before", -1, nil},
		{"the step before again", -1, app.ErrInvalidSecondFactor},
		{"this step", 0, nil},
		{"this step again", 0, app.ErrInvalidSecondFactor},
		{"the step after", 1, nil},
		// Accepting the step after closes this one: a code is never
		// accepted once a later one was.
		{"this step after the next", 0, app.ErrInvalidSecondFactor},
	} {
		if err := h.factors.StepUp(ctx, u, h.code(t, secret, tc.offset)); !errors.Is(err, tc.want) {
			t.Fatalf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	h.clock.Advance(30 * time.Second) // now the former step after
	if err := h.factors.StepUp(ctx, u, h.code(t, secret, 0)); !errors.Is(err, app.ErrInvalidSecondFactor) {
		t.Fatalf("the used step once it is the clock's: %v", err)
	}
	h.nextStep()
	if err := h.factors.StepUp(ctx, u, " "+h.code(t, secret, 0)[:3]+" "+h.code(t, secret, 0)[3:]); err != nil {
		t.Fatalf("a fresh code typed with spaces: %v", err)
	}
	for _, bad := range []string{"", "12345", "1234567", "abcdef"} {
		want := app.ErrInvalidSecondFactor
		if bad == "" {
			want = app.ErrSecondFactorRequired
		}
		if err := h.factors.StepUp(ctx, u, bad); !errors.Is(err, want) {
			t.Errorf("code %q: %v, want %v", bad, err, want)
		}
	}
}

// Turning TOTP on needs a code of the secret being set up (the confirmed
// step is then used), and a second setup replaces the first secret.
func TestTOTPConfirm(t *testing.T) {
	t.Parallel()
	h := newSecurityHarness(t, app.SessionConfig{MaxFailures: 100})
	ctx := context.Background()
	_, u := h.login(t, "192.0.2.1", "")
	if _, err := h.factors.ConfirmTOTP(ctx, u, "123456"); !errors.Is(err, app.ErrNoTOTPSetup) {
		t.Fatalf("confirm without a setup: %v", err)
	}
	first, err := h.factors.BeginTOTP(ctx, u)
	if err != nil || !strings.HasPrefix(first.URI, "otpauth://totp/Quita:ana@example.com?") || !strings.Contains(first.URI, "secret="+first.Secret) {
		t.Fatalf("setup %+v %v", first, err)
	}
	second, _ := h.factors.BeginTOTP(ctx, u)
	if pending, _ := h.factors.PendingTOTP(ctx, u); pending != second || second.Secret == first.Secret {
		t.Fatalf("pending %+v, want the second setup %+v", pending, second)
	}
	if _, err := h.factors.ConfirmTOTP(ctx, u, h.code(t, first.Secret, 0)); !errors.Is(err, app.ErrInvalidSecondFactor) {
		t.Fatalf("the replaced secret's code: %v", err)
	}
	if st, _ := h.factors.Status(ctx, u); st.Enabled || !st.Pending {
		t.Fatalf("status before confirming: %+v", st)
	}
	codes, err := h.factors.ConfirmTOTP(ctx, u, h.code(t, second.Secret, 0))
	if err != nil || len(codes) != app.RecoveryCodeCount {
		t.Fatalf("confirm: %d codes, %v", len(codes), err)
	}
	st, _ := h.factors.Status(ctx, u)
	if !st.Enabled || st.Pending || st.RecoveryLeft != app.RecoveryCodeCount || st.EnabledAt == nil {
		t.Fatalf("status: %+v", st)
	}
	if err := h.factors.StepUp(ctx, u, h.code(t, second.Secret, 0)); !errors.Is(err, app.ErrInvalidSecondFactor) {
		t.Fatalf("the confirming code again: %v", err)
	}
	if _, err := h.factors.BeginTOTP(ctx, u); !errors.Is(err, app.ErrTOTPEnabled) {
		t.Fatalf("a setup while on: %v", err)
	}
	if _, err := h.factors.PendingTOTP(ctx, u); !errors.Is(err, app.ErrTOTPEnabled) {
		t.Fatalf("the pending setup while on: %v", err)
	}
}

// Recovery codes: ten, distinct, shown as xxxx-xxxx-xxxx, each good for
// one login in any spelling; they turn TOTP off too, but are no fresh
// code for a live key.
func TestRecoveryCodes(t *testing.T) {
	t.Parallel()
	h := newSecurityHarness(t, app.SessionConfig{MaxFailures: 100})
	ctx := context.Background()
	_, u := h.login(t, "192.0.2.1", "")
	_, codes := h.enable(t, u)
	format := regexp.MustCompile(`^[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}$`)
	seen := map[string]bool{}
	for _, c := range codes {
		if !format.MatchString(c) || seen[c] {
			t.Fatalf("code %q (seen %v)", c, seen[c])
		}
		seen[c] = true
	}
	login := func(code string) error {
		_, err := h.sessions.SignIn(ctx, app.LoginRequest{Email: h.user.Email, Password: securityPassword, Code: code, Client: "192.0.2.1"})
		return err
	}
	// Upper case, no dashes, spaces: the same code.
	if err := login(strings.ToUpper(strings.ReplaceAll(codes[0], "-", " "))); err != nil {
		t.Fatalf("a recovery code: %v", err)
	}
	if err := login(codes[0]); !errors.Is(err, app.ErrInvalidSecondFactor) {
		t.Fatalf("the same recovery code again: %v", err)
	}
	if err := h.factors.StepUp(ctx, u, codes[1]); !errors.Is(err, app.ErrInvalidSecondFactor) {
		t.Fatalf("a recovery code as a fresh code: %v", err)
	}
	if st, _ := h.factors.Status(ctx, u); st.RecoveryLeft != app.RecoveryCodeCount-1 {
		t.Fatalf("left %d", st.RecoveryLeft)
	}
	if err := login("zzzz-zzzz-zzzz"); !errors.Is(err, app.ErrInvalidSecondFactor) {
		t.Fatalf("a made-up code: %v", err)
	}
	if err := h.factors.DisableTOTP(ctx, u, ""); !errors.Is(err, app.ErrSecondFactorRequired) {
		t.Fatalf("disable without a code: %v", err)
	}
	if err := h.factors.DisableTOTP(ctx, u, codes[1]); err != nil {
		t.Fatalf("disable with a recovery code: %v", err)
	}
	if err := h.factors.DisableTOTP(ctx, u, codes[2]); !errors.Is(err, app.ErrTOTPNotEnabled) {
		t.Fatalf("disable again: %v", err)
	}
	if err := login(""); err != nil {
		t.Fatalf("password only after disabling: %v", err)
	}
}

// Codes typed in a session are counted per user: past MaxFailures wrong
// ones, even the right code waits out the window.
func TestStepUpCodesAreThrottled(t *testing.T) {
	t.Parallel()
	h := newSecurityHarness(t, app.SessionConfig{MaxFailures: 3})
	ctx := context.Background()
	_, u := h.login(t, "192.0.2.1", "")
	secret, _ := h.enable(t, u)
	for range 3 {
		if err := h.factors.StepUp(ctx, u, "000000"); !errors.Is(err, app.ErrInvalidSecondFactor) {
			t.Fatal(err)
		}
	}
	var te *app.ThrottledError
	if err := h.factors.StepUp(ctx, u, h.code(t, secret, 0)); !errors.As(err, &te) {
		t.Fatalf("the right code past the limit: %v", err)
	}
	h.clock.Advance(15 * time.Minute)
	if err := h.factors.StepUp(ctx, u, h.code(t, secret, 0)); err != nil {
		t.Fatalf("after the window: %v", err)
	}
}
