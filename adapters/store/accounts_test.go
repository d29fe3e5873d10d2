package store_test

import (
	"crypto/rand"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

func newAccount(t testing.TB, db *store.DB, email string) (domain.Account, ports.User, []ports.APIKeyRecord) {
	t.Helper()
	a := domain.Account{
		ID: domain.PrefixAccount + newRawID(t), Name: "Loja da Ana", MerchantName: "LOJA DA ANA",
		MerchantCity: "SAO PAULO", Document: "11222333000181", DefaultExpiry: 30 * time.Minute, CreatedAt: baseTime,
	}
	u := ports.User{
		ID: domain.PrefixUser + newRawID(t), AccountID: a.ID, Email: email,
		PasswordHash: "$argon2id$v=19$m=65536,t=1,p=4$c2FsdA$aGFzaA", CreatedAt: baseTime,
	}
	var keys []ports.APIKeyRecord
	for i, mode := range []domain.Mode{domain.ModeLive, domain.ModeTest} {
		keys = append(keys, newKey(t, a.ID, mode, baseTime.Add(time.Duration(i)*time.Second)))
	}
	if err := db.CreateAccount(t.Context(), a, u, keys); err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
	return a, u, keys
}

func newKey(t testing.TB, accountID string, mode domain.Mode, at time.Time) ports.APIKeyRecord {
	t.Helper()
	secret, err := domain.NewAPIKey(mode, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return ports.APIKeyRecord{
		ID: domain.PrefixAPIKey + newRawID(t), AccountID: accountID, Mode: mode,
		Fingerprint: domain.APIKeyFingerprint(secret), Prefix: domain.APIKeyPrefix(secret),
		Label: string(mode) + " key", CreatedAt: at,
	}
}

func testAccountsUsersAndKeys(t *testing.T, db *store.DB) {
	ctx := t.Context()
	a, u, keys := newAccount(t, db, "Ana@Example.com")

	gotA, err := db.GetAccount(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantA := a
	wantA.CreatedAt = micro(a.CreatedAt)
	if !reflect.DeepEqual(*gotA, wantA) {
		t.Errorf("account\n got: %+v\nwant: %+v", *gotA, wantA)
	}
	if _, err := db.GetAccount(ctx, "acct_missing"); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("GetAccount of unknown id: err %v, want ErrNotFound", err)
	}

	gotU, err := db.GetUserByEmail(ctx, "ana@EXAMPLE.com")
	if err != nil {
		t.Fatalf("GetUserByEmail (other case): %v", err)
	}
	wantU := u
	wantU.CreatedAt = micro(u.CreatedAt)
	if !reflect.DeepEqual(*gotU, wantU) {
		t.Errorf("user\n got: %+v\nwant: %+v", *gotU, wantU)
	}
	if _, err := db.GetUserByEmail(ctx, "nobody@example.com"); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("GetUserByEmail of unknown address: err %v, want ErrNotFound", err)
	}

	for _, k := range keys {
		gotK, gotAcct, err := db.LookupAPIKey(ctx, k.Fingerprint)
		if err != nil {
			t.Fatalf("LookupAPIKey: %v", err)
		}
		wantK := k
		wantK.CreatedAt = micro(k.CreatedAt)
		if !reflect.DeepEqual(*gotK, wantK) || !reflect.DeepEqual(*gotAcct, wantA) {
			t.Errorf("LookupAPIKey\n got: %+v %+v\nwant: %+v %+v", *gotK, *gotAcct, wantK, wantA)
		}
	}
	if _, _, err := db.LookupAPIKey(ctx, strings.Repeat("0", 64)); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("LookupAPIKey of unknown fingerprint: err %v, want ErrNotFound", err)
	}

	// A second account with the same e-mail in another case is refused,
	// and nothing of it is written.
	b := domain.Account{ID: "acct_b2", Name: "B", CreatedAt: baseTime}
	dupUser := ports.User{ID: "usr_b2", AccountID: b.ID, Email: "ANA@example.com", PasswordHash: "x", CreatedAt: baseTime}
	err = db.CreateAccount(ctx, b, dupUser, []ports.APIKeyRecord{newKey(t, b.ID, domain.ModeLive, baseTime)})
	if !errors.Is(err, ports.ErrDuplicate) {
		t.Fatalf("CreateAccount with a taken e-mail: err %v, want ErrDuplicate", err)
	}
	if _, err := db.GetAccount(ctx, b.ID); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("the refused account was written (err %v)", err)
	}
	if n, err := db.CountAccounts(ctx); err != nil || n != 1 {
		t.Errorf("CountAccounts = %d, %v; want 1", n, err)
	}

	// The merchant document is replaced (and read with the keys), or
	// cleared; an unknown account is ErrNotFound.
	for _, doc := range []string{"52998224725", ""} {
		if err := db.SetAccountDocument(ctx, a.ID, doc); err != nil {
			t.Fatalf("SetAccountDocument(%q): %v", doc, err)
		}
		got, err := db.GetAccount(ctx, a.ID)
		if err != nil || got.Document != doc {
			t.Errorf("after SetAccountDocument(%q): %+v %v", doc, got, err)
		}
		_, viaKey, err := db.LookupAPIKey(ctx, keys[0].Fingerprint)
		if err != nil || viaKey.Document != doc {
			t.Errorf("LookupAPIKey after SetAccountDocument(%q): %+v %v", doc, viaKey, err)
		}
	}
	if err := db.SetAccountDocument(ctx, "acct_missing", "52998224725"); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("SetAccountDocument of unknown id: err %v, want ErrNotFound", err)
	}

	// Extra keys: created, listed newest first, fingerprints unique.
	extra := newKey(t, a.ID, domain.ModeLive, baseTime.Add(time.Minute))
	if err := db.CreateAPIKey(ctx, extra); err != nil {
		t.Fatalf("CreateAPIKey: %v", err)
	}
	again := newKey(t, a.ID, domain.ModeTest, baseTime)
	again.Fingerprint = extra.Fingerprint
	if err := db.CreateAPIKey(ctx, again); !errors.Is(err, ports.ErrDuplicate) {
		t.Errorf("CreateAPIKey with a taken fingerprint: err %v, want ErrDuplicate", err)
	}
	list, err := db.ListAPIKeys(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	var gotIDs []string
	for _, k := range list {
		gotIDs = append(gotIDs, k.ID)
	}
	if want := []string{extra.ID, keys[1].ID, keys[0].ID}; !slices.Equal(gotIDs, want) {
		t.Errorf("ListAPIKeys = %v, want %v", gotIDs, want)
	}
}

func testRevokedKeyIsNotFound(t *testing.T, db *store.DB) {
	ctx := t.Context()
	a, _, keys := newAccount(t, db, "revoke@example.com")
	live, test := keys[0], keys[1]
	revokedAt := baseTime.Add(time.Hour + 7*time.Nanosecond)

	if err := db.RevokeAPIKey(ctx, "acct_other", live.ID, revokedAt); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("revoking another account's key: err %v, want ErrNotFound", err)
	}
	if _, _, err := db.LookupAPIKey(ctx, live.Fingerprint); err != nil {
		t.Fatalf("key revoked through another account: %v", err)
	}
	if err := db.RevokeAPIKey(ctx, a.ID, live.ID, revokedAt); err != nil {
		t.Fatalf("RevokeAPIKey: %v", err)
	}
	if _, _, err := db.LookupAPIKey(ctx, live.Fingerprint); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("LookupAPIKey of a revoked key: err %v, want ErrNotFound", err)
	}
	if _, _, err := db.LookupAPIKey(ctx, test.Fingerprint); err != nil {
		t.Errorf("the other key stopped working: %v", err)
	}
	// Revoking again succeeds and keeps the first time.
	if err := db.RevokeAPIKey(ctx, a.ID, live.ID, revokedAt.Add(time.Hour)); err != nil {
		t.Errorf("RevokeAPIKey again: %v", err)
	}
	if err := db.RevokeAPIKey(ctx, a.ID, "key_missing", revokedAt); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("RevokeAPIKey of unknown key: err %v, want ErrNotFound", err)
	}
	list, err := db.ListAPIKeys(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range list {
		switch k.ID {
		case live.ID:
			if k.RevokedAt == nil || !k.RevokedAt.Equal(micro(revokedAt)) {
				t.Errorf("revoked_at = %v, want %v", k.RevokedAt, micro(revokedAt))
			}
		case test.ID:
			if k.RevokedAt != nil {
				t.Errorf("untouched key has revoked_at %v", k.RevokedAt)
			}
		}
	}
}
