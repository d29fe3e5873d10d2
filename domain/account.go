package domain

import "time"

// Account is a merchant. Its settings shape every charge it creates.
type Account struct {
	ID   string
	Name string
	// MerchantName and MerchantCity go into BR Codes (tags 59 and 60).
	MerchantName string
	MerchantCity string
	// DefaultExpiry applies to charges created without expires_in.
	DefaultExpiry time.Duration
	// TransactionWebhookSecret signs the legacy events sent to the
	// per-transaction webhookUrl of the account's charges (64 hex).
	TransactionWebhookSecret string
	CreatedAt                time.Time
}
