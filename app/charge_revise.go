package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// ErrRevisionConflict: the charge's terms kept changing under other
// revisions while this one was carried to the acquirer; nothing of this
// one was committed. Read the charge and revise again.
var ErrRevisionConflict = errors.New("the charge's terms were revised by another request meanwhile")

// maxReviseAttempts bounds how often ReviseDueTerms carries a revision to
// the acquirer again after another revision committed first.
const maxReviseAttempts = 3

// errTermsMoved: between the read and the commit another revision
// committed other terms.
var errTermsMoved = errors.New("due terms moved")

// errAlreadyRevised: the terms to commit are the charge's already.
var errAlreadyRevised = errors.New("due terms already revised")

// ReviseDueTerms changes the terms of the caller's due-date charge id
// (domain.Charge.ReviseDueTerms) and returns the charge as committed.
//
// The acquirer is revised first, outside any transaction, with the whole
// of the new terms; then the charge is committed under its row lock only
// if it still has the terms the revision was computed from (or already
// has the new ones) and still awaits payment. So a payment settled
// meanwhile is never overwritten: the revision ends with
// domain.ErrChargeNotRevisable. When another revision committed first,
// this one is computed again from the committed terms and carried to the
// acquirer again, so the acquirer ends with the terms Quita commits; after
// maxReviseAttempts it ends with ErrRevisionConflict. When the acquirer
// accepted and the commit failed (the database unavailable), the acquirer
// holds terms Quita does not: the same revision again is computed from the
// stored terms, sends the acquirer the same terms (no change there) and
// commits them.
//
// Errors: those of Get, domain.ErrNotDueDateCharge,
// domain.ErrChargeNotRevisable, a *domain.ValidationError naming the rule,
// the acquirer's errors (ErrAcquirerRejected becomes
// domain.ErrChargeNotRevisable when the charge stopped awaiting payment
// meanwhile), ErrRevisionConflict. A revision that changes nothing
// answers the charge without calling the acquirer.
func (s *ChargeService) ReviseDueTerms(ctx context.Context, caller Caller, id string, rev domain.DueRevision) (*domain.Charge, error) {
	scope := caller.Scope()
	for attempt := 1; ; attempt++ {
		c, err := s.Get(ctx, caller, id)
		if err != nil {
			return nil, err
		}
		base, want, changed, err := revised(c, rev, s.clock.Now())
		if err != nil {
			return nil, err
		}
		if !changed {
			return c, nil
		}
		if err := s.reviseAtAcquirer(ctx, scope, c, want); err != nil {
			if errors.Is(err, ports.ErrAcquirerRejected) {
				if fresh, gerr := s.Get(ctx, caller, id); gerr == nil {
					if _, _, _, rerr := revised(fresh, rev, s.clock.Now()); errors.Is(rerr, domain.ErrChargeNotRevisable) {
						return nil, rerr
					}
				}
			}
			return nil, err
		}
		out, err := s.commitRevision(ctx, scope, id, rev, base, want)
		switch {
		case errors.Is(err, errTermsMoved) && attempt < maxReviseAttempts:
			continue
		case errors.Is(err, errTermsMoved):
			return nil, ErrRevisionConflict
		case err != nil:
			return nil, err
		}
		s.log.InfoContext(ctx, "due-date charge revised", "charge", domain.PrefixCharge+id, "mode", string(caller.Mode))
		return out, nil
	}
}

// revised applies rev to a copy of c at now: the terms before and after,
// and whether they differ. c is not changed.
func revised(c *domain.Charge, rev domain.DueRevision, now time.Time) (base, next domain.DueTerms, changed bool, err error) {
	base, _ = c.DueTerms()
	cp := domain.UnmarshalChargeFromStorage(c.Snapshot())
	if changed, err = cp.ReviseDueTerms(rev, now); err != nil || !changed {
		return base, base, false, err
	}
	next, _ = cp.DueTerms()
	return base, next, true, nil
}

// reviseAtAcquirer carries terms to the acquirer of c's mode.
func (s *ChargeService) reviseAtAcquirer(ctx context.Context, scope ports.Scope, c *domain.Charge, terms domain.DueTerms) error {
	if s.acquirer.reviser == nil {
		return fmt.Errorf("%w: the acquirer cannot revise due-date charges", ports.ErrAcquirerNotConfigured)
	}
	req := ports.ReviseDueChargeRequest{Scope: scope, ChargeID: c.ID(), Due: terms}
	if pix := c.Pix(); pix != nil {
		req.TxID = pix.TxID
	}
	_, req.ProviderRef = c.Provider()
	if err := s.acquirer.reviser.ReviseDueCharge(ctx, req); err != nil {
		return fmt.Errorf("revise due-date charge: %w", err)
	}
	return nil
}

// commitRevision writes rev on the locked charge when its terms are still
// base (errTermsMoved otherwise), and checks that the result is want, the
// terms the acquirer was given. A charge that has want already is left as
// it is. No event is written: no event type means a change of terms
// (docs/due-date-charges.md).
func (s *ChargeService) commitRevision(ctx context.Context, scope ports.Scope, id string, rev domain.DueRevision, base, want domain.DueTerms) (*domain.Charge, error) {
	var out *domain.Charge
	err := s.store.UpdateCharge(ctx, scope, id, func(_ context.Context, c *domain.Charge, _ ports.ChargeTx) (ports.ChargeChange, error) {
		cur, ok := c.DueTerms()
		if ok && cur.Equal(want) && !cur.Equal(base) {
			out = c
			return ports.ChargeChange{}, errAlreadyRevised
		}
		if _, err := c.ReviseDueTerms(rev, s.clock.Now()); err != nil {
			return ports.ChargeChange{}, err
		}
		if !cur.Equal(base) {
			return ports.ChargeChange{}, errTermsMoved
		}
		if got, _ := c.DueTerms(); !got.Equal(want) {
			// Only the day changed between the read and now (a rule
			// about today); the acquirer was given other terms.
			return ports.ChargeChange{}, errTermsMoved
		}
		out = c
		return ports.ChargeChange{}, nil
	})
	if errors.Is(err, errAlreadyRevised) {
		return out, nil
	}
	return out, err
}
