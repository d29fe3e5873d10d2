package httpapi

import (
	"net/http"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

type walletJSON struct {
	Currency       domain.Currency `json:"currency"`
	WalletType     string          `json:"walletType"`
	Balance        int64           `json:"balance"`
	PendingBalance int64           `json:"pendingBalance"`
}

func (c *PaymentsController) wallets(_ http.ResponseWriter, r *http.Request) (any, error) {
	ws, err := c.payments.Wallets(r.Context(), callerFrom(r.Context()))
	if err != nil {
		return nil, err
	}
	out := make([]walletJSON, 0, len(ws))
	for _, wl := range ws {
		out = append(out, walletJSON{Currency: wl.Currency, WalletType: "OPERATIONAL", Balance: wl.Available, PendingBalance: wl.Pending})
	}
	return out, nil
}

type balanceEntry struct {
	Currency  domain.Currency `json:"currency"`
	Available int64           `json:"available"`
	Pending   int64           `json:"pending"`
	Total     int64           `json:"total"`
	// Owed is the merchant's debt from disputes the wallet could not cover.
	Owed int64 `json:"owed"`
}

func newBalanceEntry(wl ports.Wallet) balanceEntry {
	return balanceEntry{Currency: wl.Currency, Available: wl.Available, Pending: wl.Pending, Total: wl.Total(), Owed: wl.Owed}
}

func (c *PaymentsController) balance(_ http.ResponseWriter, r *http.Request) (any, error) {
	ws, err := c.payments.Wallets(r.Context(), callerFrom(r.Context()))
	if err != nil {
		return nil, err
	}
	find := func(cur domain.Currency) ports.Wallet {
		for _, wl := range ws {
			if wl.Currency == cur {
				return wl
			}
		}
		return ports.Wallet{Balance: domain.Balance{Currency: cur}}
	}
	if s := r.URL.Query().Get("currency"); s != "" {
		cur, err := domain.ParseCurrency(s)
		if err != nil {
			return nil, err
		}
		wl := find(cur)
		return map[string]any{"available": wl.Available, "pending": wl.Pending, "owed": wl.Owed, "currency": cur,
			"next_release_at": optTimePtr(wl.NextReleaseAt), "next_release_amount": releaseAmount(wl)}, nil
	}
	primary := find(domain.CurrencyBRL)
	bals := make([]balanceEntry, 0, len(ws))
	for _, wl := range ws {
		bals = append(bals, newBalanceEntry(wl))
	}
	return map[string]any{
		"available": primary.Available, "pending": primary.Pending, "total": primary.Total(), "retained": primary.Pending,
		"owed": primary.Owed, "currency": primary.Currency, "next_release_at": optTimePtr(primary.NextReleaseAt),
		"next_release_amount": releaseAmount(primary), "balances": bals,
		"primary": newBalanceEntry(primary),
	}, nil
}

func releaseAmount(w ports.Wallet) *int64 {
	if w.NextReleaseAt == nil {
		return nil
	}
	a := w.NextReleaseAmount
	return &a
}
