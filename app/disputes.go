package app

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// errNoNewDispute leaves a charge whose disputes are all recorded
// unwritten.
var errNoNewDispute = errors.New("no new dispute")

// ApplyDisputes records returns the payer's PSP made from charge id's
// credited Pix (MED returns) and debits the merchant for each, in one
// transaction under the charge's lock: available first, then pending, the
// rest as the merchant's debt (domain.DisputeEntry). The charge becomes
// DISPUTE with its events. A dispute recorded before (same return id) is
// skipped, so a callback and a reconciliation pass that both see a return
// debit it once. A dispute the charge cannot take (domain.ErrChargeNotDisputable,
// domain.ErrDisputeExceedsAmount) leaves the others recorded and is
// returned as the error. It returns the charge and how many disputes it
// recorded.
func (s *ChargeService) ApplyDisputes(ctx context.Context, scope ports.Scope, id string, ds []domain.Dispute) (*domain.Charge, int, error) {
	var (
		out      *domain.Charge
		added    int
		unplaced error // the first dispute that could not be recorded
		err      error
	)
	for range maxBalanceRetries {
		added, unplaced = 0, nil
		err = s.store.UpdateCharge(ctx, scope, id, func(ctx context.Context, c *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
			out = c
			prev := c.Status()
			w := newWallets(tx, c.Currency())
			now := s.clock.Now()
			var ch ports.ChargeChange
			for _, d := range ds {
				if d.Reason == domain.DisputeOther {
					// An ordinary devolução may be the charge's own refund.
					_, err := tx.GetRefund(ctx, d.ReturnID)
					if err == nil {
						continue
					}
					if !errors.Is(err, ports.ErrNotFound) {
						return ports.ChargeChange{}, err
					}
				}
				ok, err := c.RecordDispute(d, now)
				if errors.Is(err, domain.ErrChargeNotDisputable) || errors.Is(err, domain.ErrDisputeExceedsAmount) {
					// This one cannot be placed; the others still are.
					unplaced = cmp.Or(unplaced, err)
					continue
				}
				if err != nil {
					return ports.ChargeChange{}, err
				}
				if !ok {
					continue
				}
				es, err := s.disputeEntries(ctx, c, tx, w, d, now)
				if err != nil {
					return ports.ChargeChange{}, err
				}
				ch.Entries = append(ch.Entries, es...)
				added++
			}
			if added == 0 {
				return ports.ChargeChange{}, cmp.Or(unplaced, errNoNewDispute)
			}
			if ch.Events, err = domain.NewChargeEvents(c, prev, domain.TransitionEvents(prev, c.Status()), s.cfg.Links, s.ids.NewID, now); err != nil {
				return ports.ChargeChange{}, err
			}
			return ch, nil
		})
		if !errors.Is(err, domain.ErrInsufficientBalance) {
			break
		}
	}
	if errors.Is(err, errNoNewDispute) {
		return out, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	for _, d := range out.Disputes()[len(out.Disputes())-added:] {
		s.log.WarnContext(ctx, "the payer's PSP took money back from a credited Pix (MED return); the merchant was debited",
			"charge", domain.PrefixCharge+id, "account", scope.AccountID, "end_to_end_id", d.EndToEndID,
			"return_id", d.ReturnID, "amount", d.Amount, "reason", string(d.Reason))
	}
	return out, added, unplaced
}

// disputesOf is the devoluções of Pix p, paid to charge c, that may be
// returns the payer's PSP made (MED): done (the money left), not one of
// the charge's automatic returns of p, and not recorded on c already. A
// devolução of an ordinary nature may still be one of the charge's refunds:
// ApplyDisputes leaves those out under the charge's lock.
func disputesOf(c *domain.Charge, p ports.ReceivedPix, now time.Time) []domain.Dispute {
	var out []domain.Dispute
	known := c.Disputes()
	ownReturn := domain.ReturnAttemptID(p.EndToEndID, 1)
	for _, dv := range p.Devolutions {
		if !dv.Done || dv.ID == "" || strings.HasPrefix(dv.ID, ownReturn) {
			continue
		}
		if slices.ContainsFunc(known, func(d domain.Dispute) bool { return d.ReturnID == dv.ID }) {
			continue
		}
		d := domain.Dispute{ReturnID: dv.ID, EndToEndID: p.EndToEndID, Amount: dv.Amount, Reason: dv.Reason, At: dv.At}
		if d.Reason == "" {
			d.Reason = domain.DisputeOther
		}
		if d.At.IsZero() {
			d.At = now
		}
		out = append(out, d)
	}
	return out
}

// MedReturnInput is the sandbox's MED return: how much of the payment the
// payer's PSP takes back (nil: what the payment has left after its refunds
// and earlier disputes), and why.
type MedReturnInput struct {
	Amount *int64
	Reason domain.DisputeReason
}

// SimulateMedReturn is the test helper that has the payer's PSP take back
// part or all of a credited test-mode Pix under the MED, through the same
// path as a return the acquirer reports (ApplyDisputes).
func (s *ChargeService) SimulateMedReturn(ctx context.Context, caller Caller, id string, in MedReturnInput) (*domain.Charge, error) {
	if caller.Mode != domain.ModeTest {
		return nil, ErrTestModeOnly
	}
	if in.Reason != domain.DisputeFraud && in.Reason != domain.DisputeOperational && in.Reason != domain.DisputePixAutomatico {
		return nil, domain.Invalid(domain.FieldDisputeReason, "%s must be \"fraud\", \"operational\" or, for a subscription cycle's charge, \"pix_automatico\"", domain.FieldDisputeReason)
	}
	if in.Amount != nil && (*in.Amount <= 0 || *in.Amount > domain.MaxAmount) {
		return nil, domain.Invalid(domain.FieldAmount, "%s must be a positive integer", domain.FieldAmount)
	}
	c, err := s.Get(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	st := c.Settlement()
	if st == nil || !c.Credited() || st.PaidWith != domain.MethodPix {
		return nil, domain.ErrChargeNotDisputable
	}
	if l, ok := c.Subscription(); in.Reason == domain.DisputePixAutomatico && (!ok || l.FirstPayment()) {
		return nil, domain.Invalid(domain.FieldDisputeReason, "%s \"pix_automatico\" is for the charge of a subscription's cycle (a Pix Automático debit)", domain.FieldDisputeReason)
	}
	amount := c.RefundableAmount()
	if in.Amount != nil {
		amount = *in.Amount
	}
	if amount <= 0 {
		return nil, domain.ErrDisputeExceedsAmount
	}
	rid, err := s.ids.NewID()
	if err != nil {
		return nil, err
	}
	out, _, err := s.ApplyDisputes(ctx, caller.Scope(), c.ID(), []domain.Dispute{{ReturnID: rid, EndToEndID: st.EndToEndID,
		Amount: amount, Reason: in.Reason, At: s.clock.Now()}})
	return out, err
}

// disputeEntries debit dispute d of c, just recorded: each split's part
// from its sub-account (takeBackSplits), the rest from the charge's
// account (domain.DisputeEntry), and what a sub-account's wallet could
// not cover from its platform (the charge's account for a split, the
// platform of a sub-account's own charge), as the platform's debt when
// its wallet cannot either: the money is gone either way.
func (s *ChargeService) disputeEntries(ctx context.Context, c *domain.Charge, tx ports.ChargeTx, w *wallets, d domain.Dispute, now time.Time) ([]domain.JournalEntry, error) {
	tb, err := s.takeBackSplits(ctx, c, w, "", d.Amount, nil, now)
	if err != nil {
		return nil, err
	}
	bal, err := w.of(ctx, c.AccountID())
	if err != nil {
		return nil, err
	}
	eid, err := s.ids.NewID()
	if err != nil {
		return nil, err
	}
	e, err := domain.DisputeEntry(eid, c, d, tb.reversed, bal, now)
	if err != nil {
		return nil, err
	}
	w.apply(e)
	out := append(tb.entries, e)
	adv, err := s.advance(ctx, c, w, c.AccountID(), "", tb.short, true, now)
	if err != nil {
		return nil, err
	}
	out = append(out, adv...)
	if owed := owedBy(e); owed > 0 {
		platform, err := tx.Platform(ctx)
		if err != nil {
			return nil, err
		}
		if platform != "" {
			adv, err := s.advance(ctx, c, w, platform, "", owed, true, now)
			if err != nil {
				return nil, err
			}
			out = append(out, adv...)
		}
	}
	return out, nil
}

// owedBy is the debt entry e gave its account.
func owedBy(e domain.JournalEntry) int64 {
	var owed int64
	for _, p := range e.Postings {
		if p.Account == domain.LedgerMerchantOwed {
			owed -= p.Amount
		}
	}
	return owed
}
