package client

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Wallet is one currency's wallet.
type Wallet struct {
	Currency string `json:"currency"`
	// WalletType is OPERATIONAL.
	WalletType string `json:"walletType"`
	// Balance is available now, PendingBalance settled but held (minor
	// units).
	Balance        int64 `json:"balance"`
	PendingBalance int64 `json:"pendingBalance"`
}

// BalanceEntry is one currency's balance.
type BalanceEntry struct {
	Currency  string `json:"currency"`
	Available int64  `json:"available"`
	Pending   int64  `json:"pending"`
	Total     int64  `json:"total"`
	// Owed is the merchant's debt from disputes (MED returns) the wallet
	// could not cover; later credits pay it first.
	Owed int64 `json:"owed"`
}

// Balance is GET /v1/wallets/balance. Balance (all currencies) fills every
// field; BalanceIn (one currency, the flat legacy shape) fills Available,
// Pending, Currency and the next release only.
type Balance struct {
	// Available, Pending, Total and Retained are of Currency, the primary
	// currency (BRL) unless BalanceIn named another.
	Available int64 `json:"available"`
	Pending   int64 `json:"pending"`
	Total     int64 `json:"total"`
	Retained  int64 `json:"retained"`
	// Owed is the merchant's debt from disputes (MED returns) the wallet
	// could not cover; later credits pay it first.
	Owed     int64  `json:"owed"`
	Currency string `json:"currency"`
	// NextReleaseAt and NextReleaseAmount are the next pending release,
	// nil when none is scheduled.
	NextReleaseAt     *time.Time     `json:"next_release_at"`
	NextReleaseAmount *int64         `json:"next_release_amount"`
	Balances          []BalanceEntry `json:"balances"`
	Primary           *BalanceEntry  `json:"primary"`
}

// WalletsService is /v1/wallets.
type WalletsService struct{ c *Client }

// List lists the account's wallets, one per currency.
func (s *WalletsService) List(ctx context.Context) ([]Wallet, error) {
	var out []Wallet
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/wallets"}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Balance reads the balances of every currency.
func (s *WalletsService) Balance(ctx context.Context) (*Balance, error) {
	return s.balance(ctx, nil)
}

// BalanceIn reads one currency's balance.
func (s *WalletsService) BalanceIn(ctx context.Context, currency string) (*Balance, error) {
	return s.balance(ctx, url.Values{"currency": {currency}})
}

func (s *WalletsService) balance(ctx context.Context, q url.Values) (*Balance, error) {
	var out Balance
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/wallets/balance", query: q}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
