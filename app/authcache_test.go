package app_test

import (
	"context"
	"crypto/rand"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

// keyDB is a key store whose revocation the tests flip.
type keyDB struct {
	mu      sync.Mutex
	revoked bool
}

func (k *keyDB) store(fp string) *mocks.KeyStoreMock {
	return &mocks.KeyStoreMock{LookupAPIKeyFunc: func(_ context.Context, got string) (*ports.APIKeyRecord, *domain.Account, error) {
		k.mu.Lock()
		defer k.mu.Unlock()
		if got != fp || k.revoked {
			return nil, nil, ports.ErrNotFound
		}
		return &ports.APIKeyRecord{ID: "key_1", AccountID: "acct_1", Mode: domain.ModeTest, Fingerprint: fp},
			&domain.Account{ID: "acct_1"}, nil
	}}
}

func newAuthService(keys ports.KeyStore, ttl time.Duration) *app.AccountService {
	return app.NewAccountService(&mocks.AccountStoreMock{}, keys, &mocks.PasswordHasherMock{},
		&mocks.ClockMock{NowFunc: time.Now}, &mocks.IDGeneratorMock{}, app.AuthCacheTTL(ttl))
}

// Lookups are cached for the TTL and no longer: a revocation is seen by
// the first request after the TTL, which is what revoke waits for.
func TestAuthenticateCachesForTheTTLOnly(t *testing.T) {
	t.Parallel()
	key, _ := domain.NewAPIKey(domain.ModeTest, rand.Reader)
	db := &keyDB{}
	ks := db.store(domain.APIKeyFingerprint(key))
	svc := newAuthService(ks, 150*time.Millisecond)
	ctx := context.Background()

	for range 50 {
		if _, _, err := svc.Authenticate(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(ks.LookupAPIKeyCalls()); n != 1 {
		t.Fatalf("%d database lookups for 50 requests within the TTL, want 1", n)
	}
	db.mu.Lock()
	db.revoked = true
	db.mu.Unlock()
	time.Sleep(200 * time.Millisecond) // what KeyService.Revoke waits (TTL + margin)
	if _, _, err := svc.Authenticate(ctx, key); err == nil {
		t.Fatal("a revoked key was accepted after the TTL")
	}
	// Unknown keys are never cached: each attempt reads the store.
	before := len(ks.LookupAPIKeyCalls())
	for range 3 {
		_, _, _ = svc.Authenticate(ctx, key)
	}
	if got := len(ks.LookupAPIKeyCalls()) - before; got != 3 {
		t.Fatalf("%d lookups for 3 refused requests, want 3 (no negative caching)", got)
	}
}

func TestAuthenticateWithoutCacheReadsEveryTime(t *testing.T) {
	t.Parallel()
	key, _ := domain.NewAPIKey(domain.ModeLive, rand.Reader)
	ks := (&keyDB{}).store(domain.APIKeyFingerprint(key))
	svc := newAuthService(ks, 0)
	for range 5 {
		if _, _, err := svc.Authenticate(context.Background(), key); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(ks.LookupAPIKeyCalls()); n != 5 {
		t.Fatalf("%d lookups, want 5 with the cache off", n)
	}
}

// Revoke answers only after the TTL has passed since its commit.
func TestRevokeWaitsForAuthCaches(t *testing.T) {
	t.Parallel()
	var committed time.Time
	admin := &mocks.KeyAdminMock{ReplaceAPIKeyFunc: func(_ context.Context, _, _ string, _ time.Time,
		fn func(ports.APIKeyRecord) (*ports.APIKeyRecord, []ports.AuditEntry, error),
	) error {
		_, _, err := fn(ports.APIKeyRecord{ID: "key_1", Fingerprint: "fp"})
		committed = time.Now()
		return err
	}}
	ids := &mocks.IDGeneratorMock{NewIDFunc: func() (string, error) { return domain.NewRawID(rand.Reader) }}
	svc := app.NewKeyService(admin, &mocks.AuditLogMock{}, &mocks.RequestLogStoreMock{}, nil, nil,
		&mocks.ClockMock{NowFunc: time.Now}, ids, app.AuthCacheTTL(120*time.Millisecond))
	if err := svc.Revoke(context.Background(), app.DashboardUser{UserID: "usr_1", AccountID: "acct_1"}, "key_1"); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(committed); waited < 120*time.Millisecond {
		t.Fatalf("revoke answered %s after its commit, before the auth-cache TTL", waited)
	}
}
