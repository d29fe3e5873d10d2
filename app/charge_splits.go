package app

import (
	"context"

	"github.com/quitapix/quita/domain"
)

// attachSplits validates in's splits for the new charge c of caller and
// attaches them: against the net the caller's fee schedule would leave of
// c's amount (the largest fee of c's methods), and each account a live
// sub-account of the caller's account (else a *domain.SplitAccountError
// naming the first that is not). Nothing to do without splits.
func (s *ChargeService) attachSplits(ctx context.Context, caller Caller, c *domain.Charge, in CreateChargeInput) error {
	if len(in.Splits) == 0 && in.FeePayer == "" {
		return nil
	}
	fees, err := s.feesFor(ctx, caller.Account.ID)
	if err != nil {
		return err
	}
	var fee int64
	for _, m := range c.Methods() {
		f := fees[m].Apply(c.Amount())
		fee = max(fee, f.Provider+f.Platform)
	}
	sp, err := domain.NewSplits(in.Splits, in.FeePayer, c.Amount(), c.Amount()-fee)
	if err != nil || sp == nil {
		return err
	}
	ids := make([]string, len(sp.Items))
	for i, it := range sp.Items {
		ids[i] = it.Account
	}
	live := map[string]bool{}
	if s.cfg.Subaccounts != nil {
		if live, err = s.cfg.Subaccounts.LiveSubaccounts(ctx, caller.Account.ID, ids); err != nil {
			return err
		}
	}
	for i, id := range ids {
		if !live[id] {
			return &domain.SplitAccountError{Index: i}
		}
	}
	return c.AttachSplits(sp)
}
