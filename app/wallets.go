package app

import (
	"context"
	"fmt"
	"sort"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// ReleaseDue moves due pending holds to available.
func (s *PaymentService) ReleaseDue(ctx context.Context) (int, error) {
	now := s.clock.Now()
	holds, err := s.store.ListDueHolds(ctx, now, workerBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, h := range holds {
		eid, err := s.ids.NewID()
		if err != nil {
			return n, err
		}
		e := domain.ReleaseEntry(eid, h.Scope.AccountID, h.Scope.Mode, h.ChargeID, h.Currency, h.Amount, now)
		ok, err := s.store.ReleaseHold(ctx, h, e)
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

// Wallets returns the caller's wallets, BRL first when present.
func (s *PaymentService) Wallets(ctx context.Context, caller Caller) ([]ports.Wallet, error) {
	ws, err := s.store.Wallets(ctx, caller.Scope())
	if err != nil {
		return nil, err
	}
	sort.SliceStable(ws, func(i, j int) bool {
		return ws[i].Currency == domain.CurrencyBRL && ws[j].Currency != domain.CurrencyBRL
	})
	return ws, nil
}

// VerifyLedger recomputes every wallet from the postings, and the charge
// counters, per-day totals and refund entries from the charges and
// refunds, and returns the problems found, each naming its account (none
// when everything agrees). It reads consistent snapshots and takes no lock
// writers wait on, so it may run against a live database.
func (s *PaymentService) VerifyLedger(ctx context.Context) ([]string, error) {
	t, err := s.store.LedgerTotals(ctx)
	if err != nil {
		return nil, fmt.Errorf("ledger totals: %w", err)
	}
	problems := domain.VerifyLedger(t.Unbalanced, t.Posted, t.Stored, t.Held)
	derived, err := s.store.VerifyDerived(ctx)
	if err != nil {
		return nil, fmt.Errorf("derived totals: %w", err)
	}
	return append(problems, derived...), nil
}
