package app

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/ports"
)

// PayInput is the test helper's description of a payment: amount defaults
// to the charge amount, or for a due-date charge to the amount due on the
// day of payment; no payer document means the bank did not disclose one.
// Date, for a due-date charge only, is the day of payment in Brasília:
// today (the default) or a later day, on which the payment is made at
// noon; it never moves the server's clock.
type PayInput struct {
	Amount        *int64
	PayerDocument string
	PayerName     string
	Date          *bizdays.Date
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
	if utf8.RuneCountInString(in.PayerName) > domain.MaxNameLen {
		return Settled{}, domain.Invalid(domain.FieldPayerName,
			"%s must be at most %d characters", domain.FieldPayerName, domain.MaxNameLen)
	}
	if err := domain.CheckText(domain.FieldPayerName, in.PayerName, false); err != nil {
		return Settled{}, err
	}
	c, err := s.Get(ctx, caller, id)
	if err != nil {
		return Settled{}, err
	}
	paidAt, amount, err := s.simulatedPayment(c, in.Date)
	if err != nil {
		return Settled{}, err
	}
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
		ChargeID: c.ID(), TxID: txid, Amount: amount, PayerTaxID: in.PayerDocument, PayerName: in.PayerName, PaidAt: paidAt,
	})
	if err != nil {
		return Settled{}, fmt.Errorf("simulate payment: %w", err)
	}
	return s.ApplyPixPayment(ctx, caller.Scope(), c.ID(), p)
}

// simulatedPayment is when the sandbox's payment of c is made (zero: now)
// and the amount it brings unless the caller says otherwise: the charge's
// amount, or for a due-date charge the amount due on that day. A day after
// the last payable day is the charge's expiry (domain.ErrChargeExpired).
func (s *ChargeService) simulatedPayment(c *domain.Charge, on *bizdays.Date) (time.Time, int64, error) {
	_, due := c.DueTerms()
	if on != nil && !due {
		return time.Time{}, 0, domain.Invalid(domain.FieldPaymentDate, "%s applies only to a charge with a %s", domain.FieldPaymentDate, domain.FieldDueDate)
	}
	if !due {
		return time.Time{}, c.Amount(), nil
	}
	now := s.clock.Now()
	var at time.Time
	day := domain.BrasiliaDate(now)
	if on != nil && *on != day {
		if on.Before(day) {
			return time.Time{}, 0, domain.Invalid(domain.FieldPaymentDate, "%s must not be before today in Brasília", domain.FieldPaymentDate)
		}
		day, at = *on, domain.EndOfBrasiliaDay(*on).Add(-12*time.Hour)
	}
	b, err := c.AmountDue(day)
	if errors.Is(err, domain.ErrOverdueClosed) {
		return time.Time{}, 0, domain.ErrChargeExpired
	}
	return at, b.AmountDue, err
}

// ApplyPixPayment settles a charge with a Pix the acquirer reported, under
// the payer lock, writing the status change and its events in one
// transaction. Replaying the same payment (same end-to-end id) changes
// nothing. Money owed back — a payer the lock refused, or a wrong amount —
// is recorded as a return in the same transaction and sent through the
// acquirer after the commit; the returns worker follows it until the
// payer's bank confirms it (a mismatched charge reads processing until
// then, refunded after) and retries one the bank refuses.
func (s *ChargeService) ApplyPixPayment(ctx context.Context, scope ports.Scope, id string, p domain.PixPayment) (Settled, error) {
	var outcome domain.SettlementOutcome
	schedule, err := s.feesFor(ctx, scope.AccountID)
	if err != nil {
		return Settled{}, err
	}
	fees := schedule[domain.MethodPix]
	c, err := s.updateOwing(ctx, scope, id, func(c *domain.Charge) ([]returnDue, error) {
		var err error
		outcome, err = c.SettlePix(p, fees)
		if err != nil || outcome != domain.OutcomeUnderpaid {
			return nil, err
		}
		return []returnDue{{p.EndToEndID, p.Amount - p.Returned, domain.ReturnForWrongAmount}}, nil
	})
	if err != nil {
		return Settled{}, err
	}
	s.log.InfoContext(ctx, "pix payment applied", "charge", domain.PrefixCharge+id, "outcome", string(outcome),
		"end_to_end_id", p.EndToEndID)
	return Settled{Charge: c, Outcome: outcome}, nil
}
