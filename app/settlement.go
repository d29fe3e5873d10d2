package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// PayInput is the test helper's description of a payment: amount defaults
// to the charge amount; no payer document means the bank did not disclose
// one.
type PayInput struct {
	Amount        *int64
	PayerDocument string
	PayerName     string
}

// Settled is the result of applying a Pix payment.
type Settled struct {
	Charge  *domain.Charge
	Outcome domain.SettlementOutcome
}

// SimulatePayment has the sandbox bank pay a test-mode charge and applies
// the payment as an acquirer notification would.
func (s *ChargeService) SimulatePayment(ctx context.Context, sim ports.PaymentSimulator, caller Caller, id string, in PayInput) (Settled, error) {
	if caller.Mode != domain.ModeTest {
		return Settled{}, ErrTestModeOnly
	}
	if in.PayerDocument != "" {
		if _, err := domain.ParseTaxID(in.PayerDocument); err != nil {
			return Settled{}, domain.Invalid(domain.FieldPayerDocument,
				"%s must be a valid CPF or CNPJ", domain.FieldPayerDocument)
		}
	}
	c, err := s.Get(ctx, caller, id)
	if err != nil {
		return Settled{}, err
	}
	amount := c.Amount()
	if in.Amount != nil {
		if *in.Amount <= 0 || *in.Amount > domain.MaxAmount {
			return Settled{}, domain.Invalid(domain.FieldAmount,
				"%s must be a positive integer", domain.FieldAmount)
		}
		amount = *in.Amount
	}
	if !c.Status().Open() {
		if c.Status() == domain.TxExpired {
			return Settled{}, domain.ErrChargeExpired
		}
		return Settled{}, domain.ErrChargeNotPayable
	}
	if !c.PayableAt(s.clock.Now()) {
		// Past expires_at, in the grace: the cob has expired, so the
		// sandbox bank, like a payer's bank, pays nothing.
		return Settled{}, domain.ErrChargeExpired
	}
	var txid string
	if p := c.Pix(); p != nil {
		txid = p.TxID
	}
	p, err := sim.SimulatePixPayment(ctx, ports.SimulatePaymentRequest{
		ChargeID: c.ID(), TxID: txid, Amount: amount, PayerTaxID: in.PayerDocument, PayerName: in.PayerName,
	})
	if err != nil {
		return Settled{}, fmt.Errorf("simulate payment: %w", err)
	}
	return s.ApplyPixPayment(ctx, caller.Scope(), c.ID(), p)
}

// ApplyPixPayment settles a charge with a Pix the acquirer reported, under
// the payer lock, writing the status change and its events in one
// transaction. Replaying the same payment (same end-to-end id) changes
// nothing. Money owed back — a payer the lock refused, or a wrong amount —
// is returned through the acquirer after the commit; a return that fails
// then is retried by the returns worker (lock mismatch) or by the
// acquirer's notification retry (wrong amount, which changes nothing here).
func (s *ChargeService) ApplyPixPayment(ctx context.Context, scope ports.Scope, id string, p domain.PixPayment) (Settled, error) {
	var outcome domain.SettlementOutcome
	schedule, err := s.feesFor(ctx, scope.AccountID)
	if err != nil {
		return Settled{}, err
	}
	fees := schedule[domain.MethodPix]
	c, err := s.update(ctx, scope, id, func(c *domain.Charge) error {
		var err error
		outcome, err = c.SettlePix(p, fees)
		return err
	})
	if err != nil {
		return Settled{}, err
	}
	s.log.InfoContext(ctx, "pix payment applied", "charge", domain.PrefixCharge+id, "outcome", string(outcome),
		"end_to_end_id", p.EndToEndID)
	switch outcome {
	case domain.OutcomePayerMismatch:
		if err := s.returnToPayer(ctx, c); err != nil {
			s.log.WarnContext(ctx, "automatic return deferred to the returns worker", "charge", domain.PrefixCharge+id, "err", err)
		}
		if c, err = s.store.GetCharge(ctx, scope, id); err != nil {
			return Settled{}, err
		}
	case domain.OutcomeUnderpaid:
		_, err := s.acquirer.ReturnPix(ctx, ports.ReturnPixRequest{
			Scope: scope, ChargeID: id, EndToEndID: p.EndToEndID, ReturnID: returnID(p.EndToEndID),
			Amount: p.Amount, Reason: "amount differs from the charge amount",
		})
		if err != nil {
			return Settled{}, fmt.Errorf("return underpayment: %w", err)
		}
	}
	return Settled{Charge: c, Outcome: outcome}, nil
}

// returnID derives the acquirer-side idempotency key of a return from the
// payment it returns, so a retried return is the same return.
func returnID(endToEndID string) string {
	return "D" + endToEndID[1:]
}

// returnPix gives a received Pix back to its payer through the acquirer
// (idempotent by ReturnID).
func (s *ChargeService) returnPix(ctx context.Context, req ports.ReturnPixRequest) (*ports.ReturnPixResponse, error) {
	return s.acquirer.ReturnPix(ctx, req)
}

// returnToPayer performs the automatic return a payer-lock mismatch owes and
// records it. Safe to repeat: the return id is derived from the payment.
func (s *ChargeService) returnToPayer(ctx context.Context, c *domain.Charge) error {
	st := c.Settlement()
	if c.ReturnState() != domain.ReturnRequested || st == nil {
		return nil
	}
	scope := ports.Scope{AccountID: c.AccountID(), Mode: c.Mode()}
	_, err := s.acquirer.ReturnPix(ctx, ports.ReturnPixRequest{
		Scope: scope, ChargeID: c.ID(), EndToEndID: st.EndToEndID, ReturnID: returnID(st.EndToEndID),
		Amount: st.Amount, Reason: "payer does not match the charge's expected payer",
	})
	if err != nil {
		return err
	}
	err = s.store.UpdateCharge(ctx, scope, c.ID(), func(_ context.Context, c *domain.Charge, _ ports.ChargeTx) (ports.ChargeChange, error) {
		return ports.ChargeChange{}, c.MarkReturned(s.clock.Now())
	})
	if errors.Is(err, domain.ErrInvalidTransition) {
		return nil // another worker recorded it first
	}
	return err
}
