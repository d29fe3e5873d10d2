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
// when everything agrees): CheckLedger's full run.
func (s *PaymentService) VerifyLedger(ctx context.Context) ([]string, error) {
	r, err := s.CheckLedger(ctx, true)
	return r.Problems, err
}

// CheckLedger verifies the ledger in one snapshot that takes no lock
// writers wait on, so it may run against a live database: in full when
// full is set (or no checkpoint can be gone on from), otherwise only
// what was written since the checkpoint of the last run, with every
// wallet's total. The events kept are DefaultEventRetention's: the
// incremental run finds the charges changed since its checkpoint by
// their events.
func (s *PaymentService) CheckLedger(ctx context.Context, full bool) (ports.LedgerCheck, error) {
	r, err := s.store.CheckLedger(ctx, ports.LedgerCheckOptions{Full: full, EventsKept: DefaultEventRetention})
	if err != nil {
		return r, fmt.Errorf("ledger verify: %w", err)
	}
	return r, nil
}
