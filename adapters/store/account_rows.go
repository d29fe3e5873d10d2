package store

import (
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

type accountRow struct {
	bun.BaseModel `bun:"table:accounts,alias:a"`

	ID           string `bun:"id,pk"`
	Name         string `bun:"name"`
	MerchantName string `bun:"merchant_name"`
	MerchantCity string `bun:"merchant_city"`
	// Document: see migration 20261124060001_account_document.
	Document             string `bun:"document"`
	DefaultExpirySeconds int64  `bun:"default_expiry_seconds"`
	// TransactionWebhookSecret: see migration 20260401000001_webhooks.
	TransactionWebhookSecret string `bun:"transaction_webhook_secret"`
	// TestTransactionWebhookSecret: see migration 20261101000001_test_transaction_secret.
	TestTransactionWebhookSecret string `bun:"test_transaction_webhook_secret"`
	// ParentAccountID, Email, PayoutPixKeyType, PayoutPixKey and
	// DisabledAt describe a sub-account: see migration
	// 20261221000001_subaccounts.
	ParentAccountID  *string `bun:"parent_account_id"`
	Email            string  `bun:"email"`
	PayoutPixKeyType string  `bun:"payout_pix_key_type"`
	PayoutPixKey     string  `bun:"payout_pix_key"`
	DisabledAt       dbTime  `bun:"disabled_at"`
	// AutoPayout and AutoPayoutDay: see migration
	// 20261223000002_subaccount_auto_payout.
	AutoPayout    bool   `bun:"auto_payout"`
	AutoPayoutDay string `bun:"auto_payout_day"`
	CreatedAt     dbTime `bun:"created_at"`
}

// accountFromDomain stores DefaultExpiry in whole seconds, the unit of
// expires_in; a fraction of a second is dropped.
func accountFromDomain(a domain.Account) *accountRow {
	return &accountRow{
		ID:                           a.ID,
		Name:                         a.Name,
		MerchantName:                 a.MerchantName,
		MerchantCity:                 a.MerchantCity,
		Document:                     a.Document,
		DefaultExpirySeconds:         int64(a.DefaultExpiry / time.Second),
		TransactionWebhookSecret:     a.TransactionWebhookSecret,
		TestTransactionWebhookSecret: a.TestTransactionWebhookSecret,
		ParentAccountID:              optString(a.ParentAccountID),
		Email:                        a.Email,
		PayoutPixKeyType:             string(a.PayoutPixKey.Type),
		PayoutPixKey:                 a.PayoutPixKey.Value,
		AutoPayout:                   a.AutoPayout,
		DisabledAt:                   newDBTime(deref(a.DisabledAt)),
		CreatedAt:                    newDBTime(a.CreatedAt),
	}
}

func (r *accountRow) toDomain() *domain.Account {
	return &domain.Account{
		ID:                           r.ID,
		Name:                         r.Name,
		MerchantName:                 r.MerchantName,
		MerchantCity:                 r.MerchantCity,
		Document:                     r.Document,
		DefaultExpiry:                time.Duration(r.DefaultExpirySeconds) * time.Second,
		TransactionWebhookSecret:     r.TransactionWebhookSecret,
		TestTransactionWebhookSecret: r.TestTransactionWebhookSecret,
		ParentAccountID:              deref(r.ParentAccountID),
		Email:                        r.Email,
		PayoutPixKey:                 domain.PixKey{Type: domain.PixKeyType(r.PayoutPixKeyType), Value: r.PayoutPixKey},
		AutoPayout:                   r.AutoPayout,
		DisabledAt:                   r.DisabledAt.ptr(),
		CreatedAt:                    r.CreatedAt.Time,
	}
}

type userRow struct {
	bun.BaseModel `bun:"table:users,alias:u"`

	ID           string `bun:"id,pk"`
	AccountID    string `bun:"account_id"`
	Email        string `bun:"email"`
	EmailKey     string `bun:"email_key"`
	PasswordHash string `bun:"password_hash"`
	CreatedAt    dbTime `bun:"created_at"`
	// SecondFactor is read (hasSecondFactor), never written.
	SecondFactor bool `bun:"second_factor,scanonly"`
}

// emailKey is an e-mail address as logins compare it.
func emailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

func userFromPort(u ports.User) *userRow {
	return &userRow{
		ID:           u.ID,
		AccountID:    u.AccountID,
		Email:        u.Email,
		EmailKey:     emailKey(u.Email),
		PasswordHash: u.PasswordHash,
		CreatedAt:    newDBTime(u.CreatedAt),
	}
}

func (r *userRow) toPort() *ports.User {
	return &ports.User{
		ID:           r.ID,
		AccountID:    r.AccountID,
		Email:        r.Email,
		PasswordHash: r.PasswordHash,
		CreatedAt:    r.CreatedAt.Time,
		SecondFactor: r.SecondFactor,
	}
}

type apiKeyRow struct {
	bun.BaseModel `bun:"table:api_keys,alias:k"`

	ID          string `bun:"id,pk"`
	AccountID   string `bun:"account_id"`
	Mode        string `bun:"mode"`
	Fingerprint string `bun:"fingerprint"`
	Prefix      string `bun:"prefix"`
	Label       string `bun:"label"`
	CreatedAt   dbTime `bun:"created_at"`
	RevokedAt   dbTime `bun:"revoked_at"`

	// Account is filled by LookupAPIKey's join only.
	Account *accountRow `bun:"rel:belongs-to,join:account_id=id"`
}

func apiKeyFromPort(k ports.APIKeyRecord) apiKeyRow {
	r := apiKeyRow{
		ID:          k.ID,
		AccountID:   k.AccountID,
		Mode:        string(k.Mode),
		Fingerprint: k.Fingerprint,
		Prefix:      k.Prefix,
		Label:       k.Label,
		CreatedAt:   newDBTime(k.CreatedAt),
	}
	if k.RevokedAt != nil {
		r.RevokedAt = newDBTime(*k.RevokedAt)
	}
	return r
}

func (r *apiKeyRow) toPort() ports.APIKeyRecord {
	return ports.APIKeyRecord{
		ID:          r.ID,
		AccountID:   r.AccountID,
		Mode:        domain.Mode(r.Mode),
		Fingerprint: r.Fingerprint,
		Prefix:      r.Prefix,
		Label:       r.Label,
		CreatedAt:   r.CreatedAt.Time,
		RevokedAt:   r.RevokedAt.ptr(),
	}
}
