package httpapi

import (
	"fmt"

	"github.com/quitapix/quita/domain"
)

// splitJSON is one entry of a create's splits: a sub-account and either a
// fixed amount (centavos) or a percent of the net ("12.50").
type splitJSON struct {
	Account string  `json:"account"`
	Amount  *int64  `json:"amount"`
	Percent *string `json:"percent"`
}

// splitsInput reads splits into the domain's form; a percent that is not
// a decimal of at most two places in (0, 100] is 400 naming its entry.
func splitsInput(in []splitJSON) ([]domain.Split, error) {
	if in == nil {
		return nil, nil
	}
	out := make([]domain.Split, len(in))
	for i, s := range in {
		out[i] = domain.Split{Account: s.Account}
		if s.Amount != nil {
			if *s.Amount <= 0 {
				return nil, badRequest(fmt.Sprintf("splits[%d].amount", i), "parameter_invalid", "splits[].amount must be greater than 0")
			}
			out[i].Amount = *s.Amount
		}
		if s.Percent != nil {
			p, ok := domain.ParseSplitPercent(*s.Percent)
			if !ok {
				return nil, badRequest(fmt.Sprintf("splits[%d].percent", i), "parameter_invalid",
					`splits[].percent must be a decimal string greater than 0 and at most 100, with at most two places ("12.50")`)
			}
			out[i].Percent = p
		}
	}
	return out, nil
}
