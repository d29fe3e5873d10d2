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
	// ParentAccountID is the platform a sub-account belongs to; "" for an
	// account that is not a sub-account (marketplaces.md).
	ParentAccountID string
	// Email is a sub-account's contact address ("" for other accounts,
	// whose dashboard users carry theirs).
	Email string
	// PayoutPixKey is the Pix key a sub-account is paid out to; the zero
	// key when none was given.
	PayoutPixKey PixKey
	// AutoPayout: the sub-account's live available balance is paid out to
	// PayoutPixKey once a day (app.PayoutService.RunAutoPayouts).
	AutoPayout bool
	// DisabledAt is when the platform disabled the sub-account; nil while
	// it is live.
	DisabledAt *time.Time
	CreatedAt  time.Time
}

// IsSubaccount reports whether the account belongs to a platform.
func (a Account) IsSubaccount() bool { return a.ParentAccountID != "" }

// LiveSubaccountOf reports whether a is a sub-account of the platform
// platformID that has not been disabled: the accounts a platform may act
// for and split charges with.
func (a Account) LiveSubaccountOf(platformID string) bool {
	return platformID != "" && a.ParentAccountID == platformID && a.DisabledAt == nil
}

// TransactionSecret is the secret that signs the mode's per-transaction
// webhooks.
func (a Account) TransactionSecret(mode Mode) string {
	if mode == ModeTest {
		return a.TestTransactionWebhookSecret
	}
	return a.TransactionWebhookSecret
}
