package app

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

var (
	// ErrSubaccountNested: a sub-account (or a platform key acting for
	// one) asked to create a sub-account; only platforms have them.
	ErrSubaccountNested = errors.New("a sub-account cannot have sub-accounts")
	// ErrActAsForbidden: a sub-account's own key named another account in
	// Quita-Account. Only a platform acts for others.
	ErrActAsForbidden = errors.New("only a platform's key may act for another account")
	// ErrActAsDisabled: the platform named one of its sub-accounts that it
	// disabled.
	ErrActAsDisabled = errors.New("the sub-account is disabled")
)

// SubaccountService keeps platforms' sub-accounts and decides which
// account a platform's key may act for.
type SubaccountService struct {
	store ports.SubaccountStore
	clock ports.Clock
	ids   ports.IDGenerator
	// ttl is the AuthCacheTTL: acting-for decisions are trusted this long,
	// and Disable waits it out.
	ttl   time.Duration
	cache *authCache
}

// NewSubaccountService wires the sub-account service.
func NewSubaccountService(store ports.SubaccountStore, clock ports.Clock, ids ports.IDGenerator, ttl AuthCacheTTL) *SubaccountService {
	return &SubaccountService{store: store, clock: clock, ids: ids, ttl: time.Duration(ttl), cache: newAuthCache(ttl)}
}

// Create opens a sub-account of the caller's account, with its own
// transaction webhook secrets (its wallets, like any account's, exist in
// both modes). ErrSubaccountNested when the caller is a sub-account.
func (s *SubaccountService) Create(ctx context.Context, caller Caller, f domain.SubaccountFields) (*domain.Account, error) {
	if caller.Account.IsSubaccount() {
		return nil, ErrSubaccountNested
	}
	raw, err := s.ids.NewID()
	if err != nil {
		return nil, err
	}
	a, err := domain.NewSubaccount(domain.PrefixAccount+raw, caller.Account.ID, f, s.clock.Now())
	if err != nil {
		return nil, err
	}
	a.MerchantCity = caller.Account.MerchantCity
	a.DefaultExpiry = caller.Account.DefaultExpiry
	if a.TransactionWebhookSecret, err = domain.NewWebhookSecret(rand.Reader); err != nil {
		return nil, err
	}
	if a.TestTransactionWebhookSecret, err = domain.NewWebhookSecret(rand.Reader); err != nil {
		return nil, err
	}
	if err := s.store.CreateSubaccount(ctx, a); err != nil {
		return nil, err
	}
	return &a, nil
}

// Get reads a sub-account of the caller's account; ports.ErrNotFound for
// any other account.
func (s *SubaccountService) Get(ctx context.Context, caller Caller, id string) (*domain.Account, error) {
	return s.store.GetSubaccount(ctx, caller.Account.ID, id)
}

// List reads a page of the caller's sub-accounts, newest first.
func (s *SubaccountService) List(ctx context.Context, caller Caller, limit int, startingAfter string) ([]domain.Account, bool, error) {
	return s.store.ListSubaccounts(ctx, ports.SubaccountQuery{PlatformID: caller.Account.ID, Limit: limit, StartingAfter: startingAfter})
}

// Update changes a live sub-account's name, e-mail or payout key.
// domain.ErrSubaccountDisabled for a disabled one.
func (s *SubaccountService) Update(ctx context.Context, caller Caller, id string, ch domain.SubaccountChange) (*domain.Account, error) {
	return s.store.UpdateSubaccount(ctx, caller.Account.ID, id, func(a domain.Account) (domain.Account, error) {
		return domain.ApplySubaccountChange(a, ch)
	})
}

// Disable disables a sub-account: the platform can no longer act for it
// or split charges with it; its wallets and charges stay. Disabling a
// disabled sub-account changes nothing. It answers once no process still
// trusts an earlier decision to let the platform act for it (AuthCacheTTL).
func (s *SubaccountService) Disable(ctx context.Context, caller Caller, id string) (*domain.Account, error) {
	a, err := s.store.DisableSubaccount(ctx, caller.Account.ID, id, s.clock.Now())
	if err != nil {
		return nil, err
	}
	if err := awaitAuthTTL(ctx, s.ttl); err != nil {
		return nil, err
	}
	return a, nil
}

// ActAs is the caller a request runs as when the key of caller names
// accountID in Quita-Account: the same caller for its own account; the
// sub-account, in the key's mode, when accountID is a live sub-account of
// the caller's account. ErrActAsForbidden when the caller is a
// sub-account naming any other account; ErrActAsDisabled for a disabled
// sub-account of the caller; ports.ErrNotFound for every other account,
// existing or not, so a platform learns nothing of accounts not its own.
func (s *SubaccountService) ActAs(ctx context.Context, caller Caller, accountID string) (Caller, error) {
	if accountID == caller.Account.ID {
		return caller, nil
	}
	if caller.Account.IsSubaccount() {
		return Caller{}, ErrActAsForbidden
	}
	key := caller.Account.ID + "\x00" + accountID
	if c, _, ok := s.cache.get(key); ok {
		return actingCaller(caller, c.Account), nil
	}
	started := s.cache.now()
	a, err := s.store.GetSubaccount(ctx, caller.Account.ID, accountID)
	if err != nil {
		return Caller{}, err
	}
	if a.DisabledAt != nil {
		return Caller{}, ErrActAsDisabled
	}
	s.cache.put(key, Caller{Account: *a}, ports.APIKeyRecord{}, started)
	return actingCaller(caller, *a), nil
}

// actingCaller is the platform's caller running as its sub-account sub.
func actingCaller(platform Caller, sub domain.Account) Caller {
	return Caller{Account: sub, Mode: platform.Mode, KeyFingerprint: platform.KeyFingerprint, Platform: platform.Account.ID}
}

// ReadAs is the caller of sub, a sub-account of the caller's account
// (as Get or List returned it), disabled or not, in the caller's mode, for
// the platform's dashboard to read the sub-account's wallets, charges and
// transfers: only reads are made with it (ActAs decides what may be
// written). ports.ErrNotFound when sub is not the caller's sub-account.
func (s *SubaccountService) ReadAs(caller Caller, sub domain.Account) (Caller, error) {
	if sub.ParentAccountID == "" || sub.ParentAccountID != caller.Account.ID {
		return Caller{}, ports.ErrNotFound
	}
	return actingCaller(caller, sub), nil
}
