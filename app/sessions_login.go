package app

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// LoginRequest is one login attempt.
type LoginRequest struct {
	Email    string
	Password string
	// Code is a TOTP code or a recovery code, for a user with TOTP who
	// logs in in one step (the API); "" asks for the second step.
	Code string
	// Client is the caller's address as the HTTP layer trusts it ("" when
	// unknown); UserAgent its User-Agent header. Both describe the session
	// in its list (the address masked).
	Client    string
	UserAgent string
}

// SecondFactorRequired is SignIn's answer when the password was right and
// the user has TOTP but the request carried no code: CompleteSignIn takes
// Challenge and a code within ChallengeTTL. It matches
// ErrSecondFactorRequired.
type SecondFactorRequired struct {
	Challenge string
	ExpiresAt time.Time
}

func (e *SecondFactorRequired) Error() string { return ErrSecondFactorRequired.Error() }

// Is makes errors.Is(err, ErrSecondFactorRequired) hold.
func (e *SecondFactorRequired) Is(target error) bool { return target == ErrSecondFactorRequired }

// ChallengeTTL is how long the second step of a login may wait.
const ChallengeTTL = 5 * time.Minute

// challengePrefix marks the jti of a login's first step: a token signed
// like a session's, which Verify refuses and only CompleteSignIn takes.
const challengePrefix = "mfa_"

func isChallenge(tokenID string) bool { return strings.HasPrefix(tokenID, challengePrefix) }

// Login checks an e-mail and password from a client address and issues a
// session token (SignIn without a code or a User-Agent). Errors:
// ErrInvalidCredentials, *ThrottledError, *SecondFactorRequired.
func (s *SessionService) Login(ctx context.Context, email, password, client string) (Session, error) {
	return s.SignIn(ctx, LoginRequest{Email: email, Password: password, Client: client})
}

// SignIn checks the request's e-mail and password and, for a user with
// TOTP, its code, and issues a session token. Every attempt is counted
// before the password is verified (docs/security.md, "Login"), and a
// right password does not clear the counts of a user with TOTP until the
// code is right too: a wrong code is a failed login. Errors:
// ErrInvalidCredentials, *ThrottledError, *SecondFactorRequired (TOTP and
// no code), ErrInvalidSecondFactor.
func (s *SessionService) SignIn(ctx context.Context, in LoginRequest) (Session, error) {
	email := normEmail(in.Email)
	if err := s.admit(ctx, email, in.Client); err != nil {
		return Session{}, err
	}
	// Counted first, then queued: a burst is refused by the counters at
	// once, and the semaphore only sees attempts the counters allowed.
	release, err := s.hashSlot(ctx)
	if err != nil {
		return Session{}, err
	}
	user, err := s.checkPassword(ctx, email, in.Password)
	release()
	if err != nil {
		return Session{}, err
	}
	if user.SecondFactor {
		if strings.TrimSpace(in.Code) == "" {
			return Session{}, s.challenge(user)
		}
		if err := s.loginCode(ctx, user.ID, in.Code); err != nil {
			return Session{}, err
		}
	}
	return s.issue(ctx, user, email, in)
}

// CompleteSignIn is a login's second step: the challenge of SignIn's
// *SecondFactorRequired and a TOTP or recovery code, counted by the same
// counters as the password. Errors: ErrLoginChallenge, *ThrottledError,
// ErrInvalidSecondFactor.
func (s *SessionService) CompleteSignIn(ctx context.Context, challenge, code, client, userAgent string) (Session, error) {
	c, err := s.tokens.Verify(challenge, s.clock.Now())
	if err != nil || !isChallenge(c.TokenID) {
		return Session{}, ErrLoginChallenge
	}
	chk, err := s.sessions.CheckSession(ctx, c.TokenID, c.UserID, c.IssuedAt)
	if err != nil {
		return Session{}, err
	}
	if chk.Denied {
		return Session{}, ErrLoginChallenge
	}
	user, f, err := s.factors.store.GetUserSecurity(ctx, c.UserID)
	if errors.Is(err, ports.ErrNotFound) || err == nil && !f.Enabled() {
		// TOTP was turned off meanwhile: the password is asked again.
		return Session{}, ErrLoginChallenge
	}
	if err != nil {
		return Session{}, err
	}
	email := normEmail(user.Email)
	if err := s.admit(ctx, email, client); err != nil {
		return Session{}, err
	}
	ok, err := s.factors.useCode(ctx, user.ID, f, code, true)
	if err != nil {
		return Session{}, err
	}
	if !ok {
		return Session{}, ErrInvalidSecondFactor
	}
	// The first step is used up.
	if err := s.denylist.DenyToken(ctx, c.TokenID, c.ExpiresAt); err != nil {
		return Session{}, err
	}
	return s.issue(ctx, user, email, LoginRequest{Client: client, UserAgent: userAgent})
}

// admit takes one attempt of the login of email from client on every
// counter: the address, the pair, and the e-mail over all addresses (an
// address that logged in to the e-mail before is exempt from the last).
func (s *SessionService) admit(ctx context.Context, email, client string) error {
	if err := s.count(ctx, hashKey("ip", client), s.cfg.MaxAttemptsPerIP, s.cfg.IPWindow); err != nil {
		return err
	}
	if err := s.count(ctx, hashKey("pair", email, client), s.cfg.MaxFailures, s.cfg.FailureWindow); err != nil {
		return err
	}
	if err := s.count(ctx, hashKey("email", email), s.cfg.MaxFailuresPerEmail, s.cfg.FailureWindow); err != nil {
		if n, _, kerr := s.attempts.Failures(ctx, hashKey("known", email, client)); kerr != nil || n == 0 {
			return err
		}
	}
	return nil
}

// checkPassword finds the user of email and verifies password, at the
// cost of one hash whether or not the user exists.
func (s *SessionService) checkPassword(ctx context.Context, email, password string) (*ports.User, error) {
	user, err := s.users.GetUserByEmail(ctx, email)
	if err != nil && !errors.Is(err, ports.ErrNotFound) {
		return nil, err
	}
	hash := s.dummyHash
	if user != nil {
		hash = user.PasswordHash
	}
	if len(password) > MaxPasswordBytes {
		return nil, ErrInvalidCredentials
	}
	ok, verr := s.hasher.Verify(hash, password)
	if user == nil || !ok || verr != nil {
		if verr != nil && user != nil {
			s.log.ErrorContext(ctx, "stored password hash unreadable", "user", user.ID, "err", verr)
		}
		return nil, ErrInvalidCredentials
	}
	return user, nil
}

// loginCode checks the code of a one-step login.
func (s *SessionService) loginCode(ctx context.Context, userID, code string) error {
	_, f, err := s.factors.store.GetUserSecurity(ctx, userID)
	if err != nil {
		return err
	}
	ok, err := s.factors.useCode(ctx, userID, f, code, true)
	if err != nil {
		return err
	}
	if !ok {
		return ErrInvalidSecondFactor
	}
	return nil
}

// challenge signs a login's first step for user.
func (s *SessionService) challenge(user *ports.User) error {
	raw, err := s.ids.NewID()
	if err != nil {
		return err
	}
	now := s.clock.Now()
	exp := now.Add(ChallengeTTL).Truncate(time.Second)
	tok, err := s.tokens.Sign(ports.SessionClaims{TokenID: challengePrefix + raw, UserID: user.ID, AccountID: user.AccountID,
		IssuedAt: now, ExpiresAt: exp})
	if err != nil {
		return err
	}
	return &SecondFactorRequired{Challenge: tok, ExpiresAt: exp}
}

// issue ends a successful login: the counts of this address and of the
// e-mail are cleared (the guesses a distributed attacker gains per real
// login are few beside the cap), the address's known-client period
// restarts, and a session token is signed and recorded.
func (s *SessionService) issue(ctx context.Context, user *ports.User, email string, in LoginRequest) (Session, error) {
	known := hashKey("known", email, in.Client)
	for _, k := range []string{hashKey("pair", email, in.Client), hashKey("email", email), known} {
		if err := s.attempts.Reset(ctx, k); err != nil {
			s.log.WarnContext(ctx, "login throttle unavailable", "err", err)
		}
	}
	if _, _, err := s.attempts.AddFailure(ctx, known, s.cfg.KnownClientTTL); err != nil {
		s.log.WarnContext(ctx, "login throttle unavailable", "err", err)
	}
	raw, err := s.ids.NewID()
	if err != nil {
		return Session{}, err
	}
	// The token keeps whole seconds; the record keeps what the token says.
	now := s.clock.Now().Truncate(time.Second)
	claims := ports.SessionClaims{TokenID: "ses_" + raw, UserID: user.ID, AccountID: user.AccountID,
		IssuedAt: now, ExpiresAt: now.Add(s.cfg.TTL)}
	token, err := s.tokens.Sign(claims)
	if err != nil {
		return Session{}, err
	}
	rec := ports.SessionRecord{TokenID: claims.TokenID, UserID: user.ID, CreatedAt: now, ExpiresAt: claims.ExpiresAt,
		LastSeenAt: now, UserAgent: trimAgent(in.UserAgent), Client: maskClient(in.Client)}
	if err := s.sessions.RecordSession(ctx, rec); err != nil {
		return Session{}, err
	}
	return Session{Token: token, ExpiresAt: domain.Timestamp(claims.ExpiresAt), AccountID: user.AccountID}, nil
}
