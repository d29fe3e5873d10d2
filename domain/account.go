package domain

import "time"

// Account is a merchant. Its settings shape every charge it creates.
type Account struct {
	ID   string
	Name string
	// MerchantName and MerchantCity go into BR Codes (tags 59 and 60).
	MerchantName string
	MerchantCity string
	// Document is the merchant's CPF or CNPJ, normalised; receipts print
	// it masked. "" when the account was created without one.
	Document string
	// DefaultExpiry applies to charges created without expires_in.
	DefaultExpiry time.Duration
	// TransactionWebhookSecret signs the legacy events sent to the
	// per-transaction webhookUrl of the account's live charges (64 hex).
	TransactionWebhookSecret string
	// TestTransactionWebhookSecret does the same for test charges. The
	// modes never share a secret: a test key sees only this one, so it
	// cannot sign a live delivery.
	TestTransactionWebhookSecret string
	CreatedAt                    time.Time
}

// TransactionSecret is the secret that signs the mode's per-transaction
// webhooks.
func (a Account) TransactionSecret(mode Mode) string {
	if mode == ModeTest {
		return a.TestTransactionWebhookSecret
	}
	return a.TransactionWebhookSecret
}
