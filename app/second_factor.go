package app

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/quitapix/quita/ports"
)

// Errors of the second factor.
var (
	// ErrSecondFactorRequired: the user has TOTP and the call carried no
	// code (a login through the API, a live key).
	ErrSecondFactorRequired = errors.New("a code from the authenticator app is required")
	// ErrInvalidSecondFactor: the code is wrong, outside the window, or of
	// a step (or a recovery code) already used.
	ErrInvalidSecondFactor = errors.New("the code is wrong or was already used")
	// ErrTOTPEnabled: TOTP is already on (turn it off first to change the
	// secret).
	ErrTOTPEnabled = errors.New("two-step verification is already on")
	// ErrTOTPNotEnabled: TOTP is off.
	ErrTOTPNotEnabled = errors.New("two-step verification is off")
	// ErrNoTOTPSetup: no TOTP secret is being set up (or it was confirmed
	// or replaced meanwhile).
	ErrNoTOTPSetup = errors.New("no two-step verification is being set up")
)

// TOTP parameters: RFC 6238's defaults, the ones authenticator apps assume.
const (
	// TOTPIssuer names Quita in the authenticator app.
	TOTPIssuer = "Quita"
	// TOTPPeriod is the length of a step.
	TOTPPeriod = 30 * time.Second
	// RecoveryCodeCount codes are made when TOTP is turned on.
	RecoveryCodeCount = 10
)

// SecondFactorService turns TOTP on and off for a dashboard user and
// checks codes. A TOTP code is accepted for the step before, the step of
// and the step after the clock's (±30 s of drift), and only for a step
// later than the last one accepted, so each code works once and an
// older one never again. A recovery code works once. Codes typed in a
// session (turning TOTP on or off, a live API key) are counted per user
// like login failures (MaxFailures per FailureWindow); codes of a login
// are counted by the login's own counters (SessionService).
type SecondFactorService struct {
	store    ports.UserSecurityStore
	codes    ports.OneTimeCodes
	attempts ports.LoginAttempts
	clock    ports.Clock
	log      *slog.Logger
	cfg      SessionConfig
}

// NewSecondFactorService wires the second factor.
func NewSecondFactorService(store ports.UserSecurityStore, codes ports.OneTimeCodes, attempts ports.LoginAttempts,
	clock ports.Clock, log *slog.Logger, cfg SessionConfig,
) *SecondFactorService {
	return &SecondFactorService{store: store, codes: codes, attempts: attempts, clock: clock, log: log, cfg: cfg.withDefaults()}
}

// TOTPStatus is what the security page shows.
type TOTPStatus struct {
	Enabled      bool
	EnabledAt    *time.Time
	RecoveryLeft int
	// Pending: a secret is being set up.
	Pending bool
}

// Status reads the user's TOTP state.
func (s *SecondFactorService) Status(ctx context.Context, u DashboardUser) (TOTPStatus, error) {
	_, f, err := s.store.GetUserSecurity(ctx, u.UserID)
	if err != nil {
		return TOTPStatus{}, err
	}
	return TOTPStatus{Enabled: f.Enabled(), EnabledAt: f.EnabledAt, RecoveryLeft: f.RecoveryLeft, Pending: f.PendingSecret != ""}, nil
}

// TOTPSetup is a secret being set up: the secret in base32 (typed into an
// app by hand) and its otpauth:// URI (the QR code).
type TOTPSetup struct {
	Secret string
	URI    string
}

// BeginTOTP makes a new secret for the user to confirm (replacing one
// being set up). ErrTOTPEnabled when TOTP is on.
func (s *SecondFactorService) BeginTOTP(ctx context.Context, u DashboardUser) (TOTPSetup, error) {
	user, f, err := s.store.GetUserSecurity(ctx, u.UserID)
	if err != nil {
		return TOTPSetup{}, err
	}
	if f.Enabled() {
		return TOTPSetup{}, ErrTOTPEnabled
	}
	secret, uri, err := s.codes.NewTOTPSecret(TOTPIssuer, user.Email)
	if err != nil {
		return TOTPSetup{}, err
	}
	if err := s.store.SetPendingTOTP(ctx, u.UserID, secret, s.clock.Now()); err != nil {
		return TOTPSetup{}, err
	}
	return TOTPSetup{Secret: secret, URI: uri}, nil
}

// PendingTOTP is the secret being set up. ErrNoTOTPSetup when there is
// none; ErrTOTPEnabled when TOTP is on.
func (s *SecondFactorService) PendingTOTP(ctx context.Context, u DashboardUser) (TOTPSetup, error) {
	user, f, err := s.store.GetUserSecurity(ctx, u.UserID)
	switch {
	case err != nil:
		return TOTPSetup{}, err
	case f.Enabled():
		return TOTPSetup{}, ErrTOTPEnabled
	case f.PendingSecret == "":
		return TOTPSetup{}, ErrNoTOTPSetup
	}
	uri, err := s.codes.TOTPURI(TOTPIssuer, user.Email, f.PendingSecret)
	if err != nil {
		return TOTPSetup{}, err
	}
	return TOTPSetup{Secret: f.PendingSecret, URI: uri}, nil
}

// ConfirmTOTP turns TOTP on with a code of the secret being set up and
// returns the recovery codes, which exist in clear only in this answer.
// ErrNoTOTPSetup, ErrTOTPEnabled, ErrInvalidSecondFactor,
// *ThrottledError.
func (s *SecondFactorService) ConfirmTOTP(ctx context.Context, u DashboardUser, code string) ([]string, error) {
	_, f, err := s.store.GetUserSecurity(ctx, u.UserID)
	switch {
	case err != nil:
		return nil, err
	case f.Enabled():
		return nil, ErrTOTPEnabled
	case f.PendingSecret == "":
		return nil, ErrNoTOTPSetup
	}
	key := hashKey("factor", u.UserID)
	if err := s.countCode(ctx, key); err != nil {
		return nil, err
	}
	step, ok, err := s.matchStep(f.PendingSecret, code, -1)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrInvalidSecondFactor
	}
	codes, hashes, err := newRecoveryCodes(u.UserID)
	if err != nil {
		return nil, err
	}
	err = s.store.EnableTOTP(ctx, u.UserID, f.PendingSecret, step, hashes, s.clock.Now())
	if errors.Is(err, ports.ErrTOTPNotPending) {
		return nil, ErrNoTOTPSetup
	}
	if err != nil {
		return nil, err
	}
	s.resetCodes(ctx, key)
	return codes, nil
}

// DisableTOTP turns TOTP off with a current code or a recovery code.
// ErrTOTPNotEnabled, ErrSecondFactorRequired (no code),
// ErrInvalidSecondFactor, *ThrottledError.
func (s *SecondFactorService) DisableTOTP(ctx context.Context, u DashboardUser, code string) error {
	_, f, err := s.store.GetUserSecurity(ctx, u.UserID)
	if err != nil {
		return err
	}
	if !f.Enabled() {
		return ErrTOTPNotEnabled
	}
	if err := s.sessionCode(ctx, u.UserID, f, code, true); err != nil {
		return err
	}
	return s.store.DisableTOTP(ctx, u.UserID)
}

// StepUp checks a fresh TOTP code for an action that needs one (a live
// API key) when the user has TOTP; without TOTP it asks nothing. A
// recovery code does not do: it is for logging in without the app.
// ErrSecondFactorRequired, ErrInvalidSecondFactor, *ThrottledError.
func (s *SecondFactorService) StepUp(ctx context.Context, u DashboardUser, code string) error {
	_, f, err := s.store.GetUserSecurity(ctx, u.UserID)
	if err != nil {
		return err
	}
	if !f.Enabled() {
		return nil
	}
	return s.sessionCode(ctx, u.UserID, f, code, false)
}

// sessionCode checks a code typed in a session, counted per user.
func (s *SecondFactorService) sessionCode(ctx context.Context, userID string, f ports.SecondFactor, code string, recovery bool) error {
	if strings.TrimSpace(code) == "" {
		return ErrSecondFactorRequired
	}
	key := hashKey("factor", userID)
	if err := s.countCode(ctx, key); err != nil {
		return err
	}
	ok, err := s.useCode(ctx, userID, f, code, recovery)
	if err != nil {
		return err
	}
	if !ok {
		return ErrInvalidSecondFactor
	}
	s.resetCodes(ctx, key)
	return nil
}

func (s *SecondFactorService) countCode(ctx context.Context, key string) error {
	n, wait, err := s.attempts.AddFailure(ctx, key, s.cfg.FailureWindow)
	if err != nil {
		s.log.WarnContext(ctx, "code throttle unavailable: refusing the code", "err", err)
		return &ThrottledError{RetryAfter: time.Second}
	}
	if n > s.cfg.MaxFailures {
		return &ThrottledError{RetryAfter: max(wait, time.Second)}
	}
	return nil
}

func (s *SecondFactorService) resetCodes(ctx context.Context, key string) {
	if err := s.attempts.Reset(ctx, key); err != nil {
		s.log.WarnContext(ctx, "code throttle unavailable", "err", err)
	}
}

// useCode accepts code once: a TOTP code (six digits) of a step later than
// the last one accepted, which becomes the last; or, when recovery is
// set, an unused recovery code, which is used up.
func (s *SecondFactorService) useCode(ctx context.Context, userID string, f ports.SecondFactor, code string, recovery bool) (bool, error) {
	if digits := strings.ReplaceAll(code, " ", ""); isTOTPCode(digits) {
		step, ok, err := s.matchStep(f.Secret, digits, f.LastStep)
		if err != nil || !ok {
			return false, err
		}
		return s.store.UseTOTPStep(ctx, userID, step)
	}
	norm, ok := normRecoveryCode(code)
	if !recovery || !ok {
		return false, nil
	}
	return s.store.UseRecoveryCode(ctx, userID, recoveryHash(userID, norm), s.clock.Now())
}

func isTOTPCode(s string) bool {
	if len(s) != 6 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// matchStep finds the earliest step of the window (the clock's step and
// one either side) after lastStep whose code is code, comparing every
// candidate in constant time.
func (s *SecondFactorService) matchStep(secret, code string, lastStep int64) (int64, bool, error) {
	code = strings.ReplaceAll(code, " ", "")
	if !isTOTPCode(code) {
		return 0, false, nil
	}
	now := s.clock.Now().Unix() / int64(TOTPPeriod/time.Second)
	found, ok := int64(0), false
	for step := now - 1; step <= now+1; step++ {
		want, err := s.codes.TOTPCode(secret, step)
		if err != nil {
			return 0, false, err
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 && step > lastStep && !ok {
			found, ok = step, true
		}
	}
	return found, ok, nil
}

// Recovery codes are twelve characters of Crockford's base32 (60 random
// bits), shown as xxxx-xxxx-xxxx; typed in any case, with or without the
// dashes, and with i, l, o read as 1, 1, 0.
const recoveryAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

const recoveryLen = 12

func newRecoveryCodes(userID string) (codes, hashes []string, err error) {
	for range RecoveryCodeCount {
		var b [recoveryLen]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, nil, err
		}
		raw := make([]byte, recoveryLen)
		for i, v := range b {
			raw[i] = recoveryAlphabet[v&31]
		}
		norm := string(raw)
		codes = append(codes, norm[:4]+"-"+norm[4:8]+"-"+norm[8:])
		hashes = append(hashes, recoveryHash(userID, norm))
	}
	return codes, hashes, nil
}

func normRecoveryCode(code string) (string, bool) {
	var b strings.Builder
	for _, c := range strings.ToLower(code) {
		switch {
		case c == '-' || c == ' ':
			continue
		case c == 'i' || c == 'l':
			c = '1'
		case c == 'o':
			c = '0'
		}
		if !strings.ContainsRune(recoveryAlphabet, c) {
			return "", false
		}
		b.WriteRune(c)
	}
	return b.String(), b.Len() == recoveryLen
}

// recoveryHash is how a recovery code is stored: SHA-256 over the user id
// and the code, so equal codes of two users differ.
func recoveryHash(userID, norm string) string {
	sum := sha256.Sum256([]byte("quita recovery code v1\x00" + userID + "\x00" + norm))
	return hex.EncodeToString(sum[:])
}
