package app

import (
	"context"
	"sync"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// Fraud codes (error.code of a 403 fraud_error).
const (
	FraudVelocityExceeded    = "fraud.velocity_exceeded"
	FraudAmountLimitExceeded = "fraud.amount_limit_exceeded"
	FraudPayerBlocked        = "fraud.payer_blocked"
)

// AuditChargeRefused is the audit action of a guard refusal.
const AuditChargeRefused = "charge.refused"

// FraudError is a charge the fraud or velocity guard refused.
type FraudError struct {
	Code    string
	Message string
}

func (e *FraudError) Error() string { return e.Code + ": " + e.Message }

// GuardDefaults are the service-wide defaults of the per-account settings.
type GuardDefaults struct {
	// RateLimitPerSecond and RateLimitBurst per API key (100 and 200).
	RateLimitPerSecond int
	RateLimitBurst     int
	// VelocityPerHour charges per payer document per hour (20).
	VelocityPerHour int
	// AmountLimit per charge in minor units (10,000,000 = R$ 100,000.00).
	AmountLimit int64
	// SettingsTTL is how long a process caches an account's settings
	// (default 5 s); a change made elsewhere applies within it.
	SettingsTTL time.Duration
}

// DefaultGuardDefaults are the documented defaults.
var DefaultGuardDefaults = GuardDefaults{RateLimitPerSecond: 100, RateLimitBurst: 200, VelocityPerHour: 20,
	AmountLimit: 10_000_000, SettingsTTL: 5 * time.Second}

// GuardSettings reads and changes the per-account guard settings, with a
// short per-process cache (the rate limiter asks on every request).
type GuardSettings struct {
	store    ports.GuardStore
	clock    ports.Clock
	defaults GuardDefaults

	mu    sync.Mutex
	cache map[string]cachedSettings
}

type cachedSettings struct {
	s     ports.AccountSettings
	keys  int // unrevoked API keys, once ActiveKeys has counted them
	until time.Time
}

// NewGuardSettings wires the settings service.
func NewGuardSettings(store ports.GuardStore, clock ports.Clock, d GuardDefaults) *GuardSettings {
	def := DefaultGuardDefaults
	if d.RateLimitPerSecond <= 0 {
		d.RateLimitPerSecond = def.RateLimitPerSecond
	}
	if d.RateLimitBurst <= 0 {
		d.RateLimitBurst = def.RateLimitBurst
	}
	if d.VelocityPerHour <= 0 {
		d.VelocityPerHour = def.VelocityPerHour
	}
	if d.AmountLimit <= 0 {
		d.AmountLimit = def.AmountLimit
	}
	if d.SettingsTTL <= 0 {
		d.SettingsTTL = def.SettingsTTL
	}
	return &GuardSettings{store: store, clock: clock, defaults: d, cache: map[string]cachedSettings{}}
}

// Effective returns the account's settings with defaults filled in.
func (g *GuardSettings) Effective(ctx context.Context, accountID string) (ports.AccountSettings, error) {
	c, err := g.cached(ctx, accountID)
	return c.s, err
}

// ActiveKeys is how many unrevoked API keys the account has, cached like
// its settings (a key minted since counts within SettingsTTL).
func (g *GuardSettings) ActiveKeys(ctx context.Context, accountID string) (int, error) {
	c, err := g.cached(ctx, accountID)
	if err != nil || c.keys >= 0 {
		return c.keys, err
	}
	n, err := g.store.ActiveAPIKeys(ctx, accountID)
	if err != nil {
		return 0, err
	}
	g.mu.Lock()
	if e, ok := g.cache[accountID]; ok && e.until.Equal(c.until) {
		e.keys = n
		g.cache[accountID] = e
	}
	g.mu.Unlock()
	return n, nil
}

// cached returns the account's effective settings from this process's
// cache, loading them when the entry is missing or old (its key count
// then unknown, -1, until ActiveKeys counts).
func (g *GuardSettings) cached(ctx context.Context, accountID string) (cachedSettings, error) {
	now := g.clock.Now()
	g.mu.Lock()
	c, ok := g.cache[accountID]
	g.mu.Unlock()
	if ok && now.Before(c.until) {
		return c, nil
	}
	s, err := g.store.GetAccountSettings(ctx, accountID)
	if err != nil {
		return cachedSettings{}, err
	}
	if s.RateLimitPerSecond <= 0 {
		s.RateLimitPerSecond = g.defaults.RateLimitPerSecond
	}
	if s.RateLimitBurst <= 0 {
		s.RateLimitBurst = max(g.defaults.RateLimitBurst, s.RateLimitPerSecond)
	}
	if s.VelocityPerHour <= 0 {
		s.VelocityPerHour = g.defaults.VelocityPerHour
	}
	if s.AmountLimit <= 0 {
		s.AmountLimit = g.defaults.AmountLimit
	}
	c = cachedSettings{s: s, keys: -1, until: now.Add(g.defaults.SettingsTTL)}
	g.mu.Lock()
	if len(g.cache) > 100_000 {
		clear(g.cache)
	}
	g.cache[accountID] = c
	g.mu.Unlock()
	return c, nil
}

// CashoutPayerOnly reports whether the account's cashout refunds in mode
// may go only to the payer's own document: its setting, else the default
// (DefaultCashoutPayerOnly). A change applies within SettingsTTL.
func (g *GuardSettings) CashoutPayerOnly(ctx context.Context, accountID string, mode domain.Mode) (bool, error) {
	s, err := g.Effective(ctx, accountID)
	if err != nil {
		return false, err
	}
	return s.CashoutPayerOnly.Or(DefaultCashoutPayerOnly(mode)), nil
}

// DefaultCashoutPayerOnly is the restriction of cashout destinations an
// account has until an operator sets it: on in live mode, where a cashout
// to someone else's key is real money leaving under a payment's name; off
// in test mode, where sandbox money moves nowhere.
func DefaultCashoutPayerOnly(mode domain.Mode) bool { return mode == domain.ModeLive }

// Set replaces the account's settings (0 = default) and drops this
// process's cached copy.
func (g *GuardSettings) Set(ctx context.Context, accountID string, s ports.AccountSettings) error {
	if s.RateLimitPerSecond < 0 || s.RateLimitBurst < 0 || s.VelocityPerHour < 0 || s.AmountLimit < 0 {
		return domain.Invalid(domain.FieldGuardSettings, "%s must not be negative", domain.FieldGuardSettings)
	}
	if !s.CashoutPayerOnly.Valid() {
		return domain.Invalid(domain.FieldGuardSettings, "%s: the cashout restriction is on, off or the default", domain.FieldGuardSettings)
	}
	if err := g.store.PutAccountSettings(ctx, accountID, s, g.clock.Now()); err != nil {
		return err
	}
	g.mu.Lock()
	delete(g.cache, accountID)
	g.mu.Unlock()
	return nil
}

// RateLimit returns the per-key request limit of the account.
func (g *GuardSettings) RateLimit(ctx context.Context, accountID string) (ports.RateLimit, error) {
	s, err := g.Effective(ctx, accountID)
	if err != nil {
		return ports.RateLimit{}, err
	}
	return ports.RateLimit{Rate: s.RateLimitPerSecond, Burst: s.RateLimitBurst, Period: time.Second}, nil
}

// FraudGuard refuses charge (and payment) creation that breaks the
// account's velocity, amount or block-list rules. It runs before any
// acquirer call and writes nothing but an audit entry when it refuses.
type FraudGuard struct {
	settings *GuardSettings
	store    ports.GuardStore
	audit    ports.AuditLog
	clock    ports.Clock
	ids      ports.IDGenerator
}

// NewFraudGuard wires the guard.
func NewFraudGuard(settings *GuardSettings, store ports.GuardStore, audit ports.AuditLog, clock ports.Clock, ids ports.IDGenerator) *FraudGuard {
	return &FraudGuard{settings: settings, store: store, audit: audit, clock: clock, ids: ids}
}

// ChargeAttempt is what the guard looks at.
type ChargeAttempt struct {
	Amount int64
	// PayerDocument is the payer's CPF/CNPJ in any spelling ("" when
	// unknown); it is normalised here and never logged.
	PayerDocument string
	// Key is the create's idempotency key: the velocity guard counts each
	// key once, however often it is retried.
	Key string
}

// Check returns a *FraudError when the attempt must be refused (after
// writing the audit entry), nil when it may proceed, or another error when
// the guard could not decide. A nil guard allows everything.
func (g *FraudGuard) Check(ctx context.Context, caller Caller, a ChargeAttempt) error {
	if g == nil {
		return nil
	}
	s, err := g.settings.Effective(ctx, caller.Account.ID)
	if err != nil {
		return err
	}
	doc := domain.NormalizeTaxID(a.PayerDocument)
	var refusal *FraudError
	switch {
	case a.Amount > s.AmountLimit:
		refusal = &FraudError{Code: FraudAmountLimitExceeded,
			Message: "the amount is above this account's per-charge limit"}
	case doc != "":
		blocked, err := g.store.PayerBlocked(ctx, caller.Account.ID, doc)
		if err != nil {
			return err
		}
		if blocked {
			refusal = &FraudError{Code: FraudPayerBlocked, Message: "the payer is on this account's block list"}
			break
		}
		now := g.clock.Now()
		admitted, err := g.store.AdmitPayerCharge(ctx, ports.PayerAdmission{Scope: caller.Scope(), Key: a.Key,
			Payer: doc, Since: now.Add(-time.Hour), Now: now, Max: s.VelocityPerHour})
		if err != nil {
			return err
		}
		if !admitted {
			refusal = &FraudError{Code: FraudVelocityExceeded,
				Message: "too many charges for this payer in the last hour"}
		}
	}
	if refusal == nil {
		return nil
	}
	raw, err := g.ids.NewID()
	if err != nil {
		return err
	}
	if err := g.audit.InsertAuditEntry(ctx, ports.AuditEntry{ID: "aud_" + raw, AccountID: caller.Account.ID,
		Action: AuditChargeRefused, KeyFingerprint: caller.KeyFingerprint, Code: refusal.Code, CreatedAt: g.clock.Now()}); err != nil {
		return err
	}
	return refusal
}

// BlockPayer puts a payer document on the account's block list.
func (g *FraudGuard) BlockPayer(ctx context.Context, accountID, document string) error {
	doc := domain.NormalizeTaxID(document)
	if doc == "" {
		return domain.Invalid(domain.FieldBlockedDocument, "%s is empty", domain.FieldBlockedDocument)
	}
	return g.store.BlockPayer(ctx, accountID, doc, g.clock.Now())
}

// UnblockPayer takes a payer document off the block list.
func (g *FraudGuard) UnblockPayer(ctx context.Context, accountID, document string) error {
	return g.store.UnblockPayer(ctx, accountID, domain.NormalizeTaxID(document))
}
