package app_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/ratelimit"
	"github.com/quitapix/quita/adapters/sessiontoken"
	"github.com/quitapix/quita/adapters/totp"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

// memSecurity is an in-memory UserStore, UserSecurityStore, SessionStore
// and TokenDenylist with the stores' semantics, for the second factor's
// and the sessions' unit tests.
type memSecurity struct {
	mu       sync.Mutex
	users    map[string]*ports.User
	factors  map[string]*ports.SecondFactor
	codes    map[string]map[string]bool // user → hash → used
	sessions map[string]ports.SessionRecord
	denied   map[string]bool
	cutoffs  map[string]time.Time
}

func newMemSecurity() *memSecurity {
	return &memSecurity{users: map[string]*ports.User{}, factors: map[string]*ports.SecondFactor{}, codes: map[string]map[string]bool{},
		sessions: map[string]ports.SessionRecord{}, denied: map[string]bool{}, cutoffs: map[string]time.Time{}}
}

func (m *memSecurity) addUser(u ports.User) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.users[u.ID] = &u
}

func (m *memSecurity) user(id string) (*ports.User, bool) {
	u, ok := m.users[id]
	if !ok {
		return nil, false
	}
	c := *u
	c.SecondFactor = m.factors[id] != nil && m.factors[id].Secret != ""
	return &c, true
}

func (m *memSecurity) GetUserByEmail(_ context.Context, email string) (*ports.User, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, u := range m.users {
		if strings.EqualFold(u.Email, strings.TrimSpace(email)) {
			c, _ := m.user(id)
			return c, nil
		}
	}
	return nil, ports.ErrNotFound
}

func (m *memSecurity) GetUserSecurity(_ context.Context, userID string) (*ports.User, ports.SecondFactor, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	u, ok := m.user(userID)
	if !ok {
		return nil, ports.SecondFactor{}, ports.ErrNotFound
	}
	var f ports.SecondFactor
	if p := m.factors[userID]; p != nil {
		f = *p
	}
	for _, used := range m.codes[userID] {
		if !used {
			f.RecoveryLeft++
		}
	}
	return u, f, nil
}

func (m *memSecurity) factor(userID string) *ports.SecondFactor {
	if m.factors[userID] == nil {
		m.factors[userID] = &ports.SecondFactor{}
	}
	return m.factors[userID]
}

func (m *memSecurity) SetPendingTOTP(_ context.Context, userID, secret string, _ time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.factor(userID).PendingSecret = secret
	return nil
}

func (m *memSecurity) EnableTOTP(_ context.Context, userID, pending string, step int64, hashes []string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.factor(userID)
	if f.PendingSecret == "" || f.PendingSecret != pending {
		return ports.ErrTOTPNotPending
	}
	f.Secret, f.PendingSecret, f.LastStep, f.EnabledAt = pending, "", step, &at
	m.codes[userID] = map[string]bool{}
	for _, h := range hashes {
		m.codes[userID][h] = false
	}
	return nil
}

func (m *memSecurity) DisableTOTP(_ context.Context, userID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.factors, userID)
	delete(m.codes, userID)
	return nil
}

func (m *memSecurity) UseTOTPStep(_ context.Context, userID string, step int64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.factors[userID]
	if f == nil || f.Secret == "" || f.LastStep >= step {
		return false, nil
	}
	f.LastStep = step
	return true, nil
}

func (m *memSecurity) UseRecoveryCode(_ context.Context, userID, hash string, _ time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	used, ok := m.codes[userID][hash]
	if !ok || used {
		return false, nil
	}
	m.codes[userID][hash] = true
	return true, nil
}

func (m *memSecurity) SetPassword(_ context.Context, email, hash string) (*ports.User, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, u := range m.users {
		if strings.EqualFold(u.Email, email) {
			u.PasswordHash = hash
			c, _ := m.user(id)
			return c, nil
		}
	}
	return nil, ports.ErrNotFound
}

func (m *memSecurity) deniedLocked(tokenID, userID string, issuedAt time.Time) bool {
	cut, ok := m.cutoffs[userID]
	return m.denied[tokenID] || ok && !cut.Before(issuedAt)
}

func (m *memSecurity) RecordSession(_ context.Context, s ports.SessionRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sessions[s.TokenID] = s
	return nil
}

func (m *memSecurity) CheckSession(_ context.Context, tokenID, userID string, issuedAt time.Time) (ports.SessionCheck, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[tokenID]
	return ports.SessionCheck{Denied: m.deniedLocked(tokenID, userID, issuedAt), Recorded: ok, LastSeenAt: s.LastSeenAt}, nil
}

func (m *memSecurity) TouchSession(_ context.Context, tokenID string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.sessions[tokenID]; ok && s.LastSeenAt.Before(at) {
		s.LastSeenAt = at
		m.sessions[tokenID] = s
	}
	return nil
}

func (m *memSecurity) live(userID string, now time.Time) []ports.SessionRecord {
	var out []ports.SessionRecord
	for _, s := range m.sessions {
		if s.UserID == userID && s.ExpiresAt.After(now) && !m.deniedLocked(s.TokenID, userID, s.CreatedAt) {
			out = append(out, s)
		}
	}
	return out
}

func (m *memSecurity) ListSessions(_ context.Context, userID string, now time.Time, limit int) ([]ports.SessionRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.live(userID, now)
	slicesSortNewest(out)
	return out[:min(limit, len(out))], nil
}

func slicesSortNewest(ss []ports.SessionRecord) {
	for i := range ss {
		for j := i + 1; j < len(ss); j++ {
			if ss[j].CreatedAt.After(ss[i].CreatedAt) || ss[j].CreatedAt.Equal(ss[i].CreatedAt) && ss[j].TokenID > ss[i].TokenID {
				ss[i], ss[j] = ss[j], ss[i]
			}
		}
	}
}

func (m *memSecurity) GetSession(_ context.Context, userID, tokenID string) (ports.SessionRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[tokenID]
	if !ok || s.UserID != userID {
		return ports.SessionRecord{}, ports.ErrNotFound
	}
	return s, nil
}

func (m *memSecurity) EndOtherSessions(_ context.Context, userID, keep string, keepIssuedAt, now time.Time) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, s := range m.live(userID, now) {
		if s.TokenID != keep {
			m.denied[s.TokenID] = true
			n++
		}
	}
	if cut := keepIssuedAt.Add(-time.Microsecond); cut.After(m.cutoffs[userID]) {
		m.cutoffs[userID] = cut
	}
	return n, nil
}

func (m *memSecurity) DenyToken(_ context.Context, tokenID string, _ time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.denied[tokenID] = true
	return nil
}

func (m *memSecurity) TokenDenied(_ context.Context, tokenID string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.denied[tokenID], nil
}

func (m *memSecurity) DenyUserTokens(_ context.Context, userID string, t time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t.After(m.cutoffs[userID]) {
		m.cutoffs[userID] = t
	}
	return nil
}

func (m *memSecurity) SessionDenied(_ context.Context, tokenID, userID string, issuedAt time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.deniedLocked(tokenID, userID, issuedAt), nil
}

// securityHarness is the session and second-factor services over
// memSecurity, real HS256 tokens, real TOTP codes, in-process counters and
// a clock the test moves.
type securityHarness struct {
	store    *memSecurity
	clock    *testkit.Clock
	sessions *app.SessionService
	factors  *app.SecondFactorService
	codes    totp.Codes
	user     ports.User
}

// securityPassword is the harness user's password.
const securityPassword = "a long enough password"

func newSecurityHarness(t *testing.T, cfg app.SessionConfig) *securityHarness {
	t.Helper()
	h := &securityHarness{store: newMemSecurity(), clock: testkit.NewClock(t0)}
	h.user = ports.User{ID: "usr_1", AccountID: "acct_1", Email: "ana@example.com", PasswordHash: "h:" + securityPassword}
	h.store.addUser(h.user)
	hasher := hasherOf()
	tokens, err := sessiontoken.New([]byte(strings.Repeat("s", 32)))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var mu sync.Mutex
	ids := &mocks.IDGeneratorMock{NewIDFunc: func() (string, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		return "raw" + strings.Repeat("x", n), nil
	}}
	clock := &mocks.ClockMock{NowFunc: h.clock.Now}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	attempts := ratelimit.NewMemoryAttempts(h.clock.Now)
	h.factors = app.NewSecondFactorService(h.store, h.codes, attempts, clock, log, cfg)
	h.sessions, err = app.NewSessionService(h.store, hasher, tokens, h.store, h.store, h.factors, attempts, clock, ids, log, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// code is the TOTP code of secret at the harness clock plus offset steps.
func (h *securityHarness) code(t *testing.T, secret string, offset int64) string {
	t.Helper()
	c, err := h.codes.TOTPCode(secret, h.clock.Now().Unix()/30+offset)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// nextStep moves the clock to the start of the next 30-second step.
func (h *securityHarness) nextStep() {
	now := h.clock.Now()
	h.clock.Advance(time.Duration(30-now.Unix()%30)*time.Second - time.Duration(now.Nanosecond()))
}

// enable turns TOTP on for the harness user and returns the secret and
// the recovery codes; the clock is then one step later.
func (h *securityHarness) enable(t *testing.T, u app.DashboardUser) (string, []string) {
	t.Helper()
	setup, err := h.factors.BeginTOTP(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	codes, err := h.factors.ConfirmTOTP(context.Background(), u, h.code(t, setup.Secret, 0))
	if err != nil {
		t.Fatal(err)
	}
	h.nextStep()
	return setup.Secret, codes
}

// login logs the harness user in with the password only.
func (h *securityHarness) login(t *testing.T, client, agent string) (app.Session, app.DashboardUser) {
	t.Helper()
	s, err := h.sessions.SignIn(context.Background(), app.LoginRequest{Email: h.user.Email, Password: securityPassword, Client: client,
		UserAgent: agent})
	if err != nil {
		t.Fatal(err)
	}
	u, err := h.sessions.Verify(context.Background(), s.Token)
	if err != nil {
		t.Fatal(err)
	}
	return s, u
}

func hasherOf() *mocks.PasswordHasherMock {
	return &mocks.PasswordHasherMock{
		HashFunc:   func(p string) (string, error) { return "h:" + p, nil },
		VerifyFunc: func(e, p string) (bool, error) { return e == "h:"+p, nil },
	}
}

func testClock(h *securityHarness) *mocks.ClockMock { return &mocks.ClockMock{NowFunc: h.clock.Now} }
