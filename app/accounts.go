package app

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// ErrUnauthenticated: the API key is missing, malformed, unknown or revoked.
var ErrUnauthenticated = errors.New("invalid api key")

// AccountService creates merchant accounts and authenticates API keys.
type AccountService struct {
	accounts ports.AccountStore
	keys     ports.KeyStore
	hasher   ports.PasswordHasher
	clock    ports.Clock
	ids      ports.IDGenerator
	cache    *authCache
}

// NewAccountService wires an account service.
func NewAccountService(accounts ports.AccountStore, keys ports.KeyStore, hasher ports.PasswordHasher, clock ports.Clock, ids ports.IDGenerator, ttl AuthCacheTTL) *AccountService {
	return &AccountService{accounts: accounts, keys: keys, hasher: hasher, clock: clock, ids: ids, cache: newAuthCache(ttl)}
}

// NewAccountInput describes a merchant and its first dashboard user.
type NewAccountInput struct {
	Name     string
	Email    string
	Password string
	// City goes into BR Codes; defaults to SAO PAULO.
	City string
	// Document is the merchant's CPF or CNPJ (optional), printed masked on
	// receipts as the payee's.
	Document string
}

// NewAccount is a created account with the cleartext of its first keys,
// shown once.
type NewAccount struct {
	AccountID string `json:"accountId"`
	UserID    string `json:"userId"`
	LiveKey   string `json:"liveKey"`
	TestKey   string `json:"testKey"`
	// TransactionWebhookSecret signs the legacy events sent to each live
	// charge's webhookUrl, TestTransactionWebhookSecret those of test
	// charges; rotate each with POST /v1/webhooks/transaction-secret/rotate
	// and a key of its mode.
	TransactionWebhookSecret     string `json:"transactionWebhookSecret"`
	TestTransactionWebhookSecret string `json:"testTransactionWebhookSecret"`
}

// MinPasswordLen is the shortest dashboard password accepted.
const MinPasswordLen = 10

// CreateAccount creates an account, its dashboard user and one live and one
// test key in one transaction.
func (s *AccountService) CreateAccount(ctx context.Context, in NewAccountInput) (NewAccount, error) {
	in.Name = strings.TrimSpace(in.Name)
	switch {
	case in.Name == "":
		return NewAccount{}, domain.Missing(domain.FieldAccountName)
	case utf8.RuneCountInString(in.Name) > domain.MaxNameLen:
		return NewAccount{}, domain.Invalid(domain.FieldAccountName, "%s must be at most %d characters", domain.FieldAccountName, domain.MaxNameLen)
	case !domain.ValidEmail(in.Email):
		return NewAccount{}, domain.Invalid(domain.FieldAccountEmail, "%s is not a valid address", domain.FieldAccountEmail)
	case len(in.Password) < MinPasswordLen:
		return NewAccount{}, domain.Invalid(domain.FieldPassword, "%s must be at least 10 characters", domain.FieldPassword)
	}
	if err := domain.CheckText(domain.FieldAccountName, in.Name, false); err != nil {
		return NewAccount{}, err
	}
	document, err := accountDocument(in.Document)
	if err != nil {
		return NewAccount{}, err
	}
	if in.City == "" {
		in.City = "SAO PAULO"
	}
	now := s.clock.Now()
	acctRaw, err := s.ids.NewID()
	if err != nil {
		return NewAccount{}, err
	}
	userRaw, err := s.ids.NewID()
	if err != nil {
		return NewAccount{}, err
	}
	hash, err := s.hasher.Hash(in.Password)
	if err != nil {
		return NewAccount{}, err
	}
	txSecret, err := domain.NewWebhookSecret(rand.Reader)
	if err != nil {
		return NewAccount{}, err
	}
	testTxSecret, err := domain.NewWebhookSecret(rand.Reader)
	if err != nil {
		return NewAccount{}, err
	}
	acct := domain.Account{
		ID: domain.PrefixAccount + acctRaw, Name: in.Name, MerchantName: in.Name, MerchantCity: in.City, Document: document,
		DefaultExpiry: domain.DefaultExpiresIn * time.Second, CreatedAt: now,
		TransactionWebhookSecret: txSecret, TestTransactionWebhookSecret: testTxSecret,
	}
	user := ports.User{ID: domain.PrefixUser + userRaw, AccountID: acct.ID, Email: strings.ToLower(in.Email), PasswordHash: hash, CreatedAt: now}
	out := NewAccount{AccountID: acct.ID, UserID: user.ID,
		TransactionWebhookSecret: txSecret, TestTransactionWebhookSecret: testTxSecret}
	var recs []ports.APIKeyRecord
	for _, mode := range []domain.Mode{domain.ModeLive, domain.ModeTest} {
		key, rec, err := s.newKey(acct.ID, mode, "default", now)
		if err != nil {
			return NewAccount{}, err
		}
		recs = append(recs, rec)
		if mode == domain.ModeLive {
			out.LiveKey = key
		} else {
			out.TestKey = key
		}
	}
	if err := s.accounts.CreateAccount(ctx, acct, user, recs); err != nil {
		return NewAccount{}, err
	}
	return out, nil
}

func (s *AccountService) newKey(accountID string, mode domain.Mode, label string, now time.Time) (string, ports.APIKeyRecord, error) {
	key, err := domain.NewAPIKey(mode, rand.Reader)
	if err != nil {
		return "", ports.APIKeyRecord{}, err
	}
	raw, err := s.ids.NewID()
	if err != nil {
		return "", ports.APIKeyRecord{}, err
	}
	return key, ports.APIKeyRecord{
		ID: domain.PrefixAPIKey + raw, AccountID: accountID, Mode: mode,
		Fingerprint: domain.APIKeyFingerprint(key), Prefix: domain.APIKeyPrefix(key), Label: label, CreatedAt: now,
	}, nil
}

// Authenticate resolves an API key to its caller. A lookup is trusted for
// at most the AuthCacheTTL; revocation waits that long before it answers,
// so a revoked key fails on the next request everywhere.
func (s *AccountService) Authenticate(ctx context.Context, key string) (Caller, *ports.APIKeyRecord, error) {
	if _, err := domain.ParseAPIKey(key); err != nil {
		return Caller{}, nil, ErrUnauthenticated
	}
	fp := domain.APIKeyFingerprint(key)
	if caller, rec, ok := s.cache.get(fp); ok {
		return caller, &rec, nil
	}
	started := s.cache.now()
	rec, acct, err := s.keys.LookupAPIKey(ctx, fp)
	if errors.Is(err, ports.ErrNotFound) {
		return Caller{}, nil, ErrUnauthenticated
	}
	if err != nil {
		return Caller{}, nil, err
	}
	if acct.DisabledAt != nil {
		// A disabled sub-account's own keys stop with it.
		return Caller{}, nil, ErrUnauthenticated
	}
	caller := Caller{Account: *acct, Mode: rec.Mode, KeyFingerprint: rec.Fingerprint}
	s.cache.put(fp, caller, *rec, started)
	return caller, rec, nil
}

// SetDocument replaces an account's CPF or CNPJ, which receipts print
// masked as the payee's; "" clears it. ports.ErrNotFound for an unknown
// account. Processes that authenticated the account's keys see the change
// within the auth cache's TTL.
func (s *AccountService) SetDocument(ctx context.Context, accountID, document string) error {
	doc, err := accountDocument(document)
	if err != nil {
		return err
	}
	return s.accounts.SetAccountDocument(ctx, accountID, doc)
}

// accountDocument checks a merchant's CPF or CNPJ and normalises it; blank
// means none.
func accountDocument(s string) (string, error) {
	if strings.TrimSpace(s) == "" {
		return "", nil
	}
	id, err := domain.ParseTaxID(s)
	if err != nil {
		return "", domain.Invalid(domain.FieldAccountDocument, "%s must be a valid CPF or CNPJ", domain.FieldAccountDocument)
	}
	return id.Value, nil
}

// CountAccounts counts accounts (to decide whether to seed a demo one).
func (s *AccountService) CountAccounts(ctx context.Context) (int, error) {
	return s.accounts.CountAccounts(ctx)
}
