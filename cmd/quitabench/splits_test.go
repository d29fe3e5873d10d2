package main

import (
	"crypto/rand"
	"encoding/json"
	"testing"

	"github.com/quitapix/quita/domain"
)

// The benchmark's split charge is one the API accepts for any number of
// splits it can be asked for: fixed and percent in turn, within the net
// left by a 0.99 % Pix fee (domain.NewSplits, the create's own check).
func TestSplitBodyIsAccepted(t *testing.T) {
	t.Parallel()
	for n := 1; n <= domain.MaxSplits; n++ {
		sellers := make([]string, n)
		for i := range sellers {
			raw, err := domain.NewRawID(rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			sellers[i] = domain.PrefixAccount + raw
		}
		raw, err := splitBody(sellers)
		if err != nil {
			t.Fatal(err)
		}
		var req struct {
			Amount int64 `json:"amount"`
			Splits []struct {
				Account string  `json:"account"`
				Amount  int64   `json:"amount"`
				Percent *string `json:"percent"`
			} `json:"splits"`
		}
		if err := json.Unmarshal(raw, &req); err != nil {
			t.Fatal(err)
		}
		items := make([]domain.Split, len(req.Splits))
		fixed, percent := 0, 0
		for i, s := range req.Splits {
			items[i] = domain.Split{Account: s.Account, Amount: s.Amount}
			if s.Percent != nil {
				p, ok := domain.ParseSplitPercent(*s.Percent)
				if !ok {
					t.Fatalf("%d splits: percent %q", n, *s.Percent)
				}
				items[i].Percent, percent = p, percent+1
			} else {
				fixed++
			}
		}
		if _, err := domain.NewSplits(items, "", req.Amount, req.Amount-req.Amount*99/10000-1); err != nil || len(items) != n {
			t.Fatalf("%d splits refused: %v", n, err)
		}
		if n >= 2 && (fixed == 0 || percent == 0) {
			t.Errorf("%d splits: %d fixed and %d percent, want both", n, fixed, percent)
		}
	}
}
