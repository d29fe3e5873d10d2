package app

import (
	"context"
	"errors"
	"time"

	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// ErrCashoutDestinationNotAllowed: the account sends cashout refunds only
// to the payer's own document (GuardSettings.CashoutPayerOnly), and this
// one would go to another key, or to a document the payer's bank did not
// disclose.
var ErrCashoutDestinationNotAllowed = errors.New("this account sends cashout refunds only to the payer's own document")

// ErrCashoutFeeRequired: a cashout to a key other than the payer's own
// document is a Pix out to a third party, which bears the Pix-out fee as a
// payout does, and the fee is debited only when the merchant asks for it
// (passFeeToTenant).
var ErrCashoutFeeRequired = errors.New("a cashout to a key other than the payer's document bears the Pix-out fee")

// RefundInput is a refund request after decoding.
type RefundInput struct {
	Amount          *int64
	Reason          string
	Strategy        domain.RefundStrategy
	PassFeeToTenant bool
	DestinationKey  string
	// ReverseSplits, when not nil, says what each split of a split charge
	// gives back of the refund; nil reverses them proportionally.
	ReverseSplits []domain.SplitReversal
}

// Refund creates a refund exactly once per idempotency key: the key's
// record, the refund, its ledger debit and the reservation on the charge
// are written in one transaction under the charge's row lock, so
// concurrent refunds can never exceed the amount. The key is checked in
// the database alone (exactlyonce.Options.DatabaseOnly): the charge's row
// lock serialises the key's requests, and a request whose twin committed
// first answers as the twin did.
func (s *PaymentService) Refund(ctx context.Context, caller Caller, id string, in RefundInput, idem Idempotency, respond Respond[domain.Refund]) (Response, error) {
	return s.once.Do(ctx, caller.Scope(), idem, exactlyonce.Options{DatabaseOnly: true}, func(a *exactlyonce.Attempt) (Response, error) {
		return s.refund(ctx, caller, id, in, a, respond)
	})
}

func (s *PaymentService) refund(ctx context.Context, caller Caller, id string, in RefundInput, a *exactlyonce.Attempt, respond Respond[domain.Refund]) (Response, error) {
	// After the replay: a refund recorded before the bound existed still
	// answers its retries as it did.
	if err := domain.CheckRefundDestinationKey(in.DestinationKey); err != nil {
		return Response{}, err
	}
	if _, err := s.charges.Get(ctx, caller, id); err != nil {
		return Response{}, err
	}
	var (
		pixOut   domain.FeeSchedule
		answer   Response
		computed bool
		err      error
	)
	if in.PassFeeToTenant {
		if pixOut, err = s.charges.pixOutSchedule(ctx, caller.Account.ID, s.cfg.PixOutFee); err != nil {
			return Response{}, err
		}
	}
	payerOnly, err := s.cashoutPayerOnly(ctx, caller)
	if err != nil {
		return Response{}, err
	}
	// The store writes the refund in one transaction with the refunds other
	// requests are creating at the same moment (PaymentStore.RefundCharge).
	// The wallet is read without a lock; the store refuses a debit that a
	// concurrent one made stale (ErrInsufficientBalance after the entry was
	// computed from a sufficient read), and a fresh read decides again.
	change := s.refundChange(in, pixOut, payerOnly, a, respond, &answer, &computed)
	ref := ports.ChargeRef{Scope: caller.Scope(), ID: id}
	err = s.store.RefundCharge(ctx, ref, change)
	for i := 1; i < maxBalanceRetries && computed && errors.Is(err, domain.ErrInsufficientBalance); i++ {
		err = s.store.RefundCharge(ctx, ref, change)
	}
	if err != nil {
		return Response{}, err
	}
	select {
	case s.refundsWake <- struct{}{}:
	default: // a wake-up is already pending
	}
	return Response{StatusCode: answer.StatusCode, Body: answer.Body}, nil
}

// cashoutPayerOnly is the account's restriction of cashout destinations
// in the caller's mode; a service built without guard settings applies
// the default.
func (s *PaymentService) cashoutPayerOnly(ctx context.Context, caller Caller) (bool, error) {
	if g := s.charges.guard; g != nil && g.settings != nil {
		return g.settings.CashoutPayerOnly(ctx, caller.Account.ID, caller.Mode)
	}
	return DefaultCashoutPayerOnly(caller.Mode), nil
}

// cashoutRoute checks where a cashout refund of the payment settled by st
// would go, and returns the strategy it takes. A cashout without a key
// goes to the payer's document; with payerOnly (the account's
// restriction) that document must be known, and a refund that did not ask
// for a cashout goes back as a devolution instead, the one way back that
// needs no document. A key must be a Pix key (checked now: the PSP could
// not send to anything else); with payerOnly it must be the payer's own
// document, and without it a key that is not bears the Pix-out fee, so
// needs passFeeToTenant: money to anyone but whoever paid is a payout in
// all but name. Errors never repeat the key.
func cashoutRoute(in RefundInput, st *domain.Settlement, payerOnly bool) (domain.RefundStrategy, error) {
	if in.DestinationKey == "" {
		if payerOnly && domain.NormalizeTaxID(st.PayerTaxID) == "" {
			if in.Strategy == "" {
				return domain.StrategyDevolution, nil
			}
			return "", ErrCashoutDestinationNotAllowed
		}
		return domain.StrategyCashout, nil
	}
	dest, err := domain.ParsePixKey(in.DestinationKey, "")
	if err != nil {
		return "", domain.Invalid(domain.FieldRefundKey,
			"%s must be a Pix key: a CPF, CNPJ, e-mail, +55 phone or random (EVP) key", domain.FieldRefundKey)
	}
	switch toPayer := domain.KeyIsPayerDocument(dest, st.PayerTaxID); {
	case payerOnly && !toPayer:
		return "", ErrCashoutDestinationNotAllowed
	case !toPayer && !in.PassFeeToTenant:
		return "", ErrCashoutFeeRequired
	}
	return domain.StrategyCashout, nil
}

// refundChange is the change of one refund attempt; pixOut is the
// account's Pix-out fee schedule, charged on a cashout with
// passFeeToTenant, and payerOnly the account's restriction of cashouts
// to the payer's own document (cashoutRoute).
func (s *PaymentService) refundChange(in RefundInput, pixOut domain.FeeSchedule, payerOnly bool, a *exactlyonce.Attempt,
	respond Respond[domain.Refund], answer *Response, computed *bool,
) ports.ChargeChangeFunc {
	key := a.Key
	return func(ctx context.Context, c *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
		*computed = false // each run (the store may run it twice) says so of itself
		now := s.clock.Now()
		amount := c.RefundableAmount()
		if in.Amount != nil {
			amount = *in.Amount
		}
		st := c.Settlement()
		if st == nil || !c.Status().Settled() {
			return ports.ChargeChange{}, domain.ErrChargeNotRefundable
		}
		strategy := in.Strategy
		if st.PaidWith == domain.MethodPix && strategy == "" {
			strategy = domain.StrategyCashout
		}
		if st.PaidWith == domain.MethodPix && strategy == domain.StrategyCashout && !s.acquirer.supportsCashout(key.Scope) {
			if in.Strategy != "" {
				return ports.ChargeChange{}, ErrCashoutNotSupported
			}
			strategy = domain.StrategyDevolution // the provider's only way back
		}
		if st.PaidWith != domain.MethodPix && strategy != "" {
			return ports.ChargeChange{}, domain.Invalid(domain.FieldRefundStrategy,
				"%s applies to PIX refunds only", domain.FieldRefundStrategy)
		}
		if strategy == domain.StrategyCashout {
			var err error
			if strategy, err = cashoutRoute(in, st, payerOnly); err != nil {
				return ports.ChargeChange{}, err
			}
		}
		if err := c.ReserveRefund(amount, now); err != nil {
			return ports.ChargeChange{}, err
		}
		rid, err := s.ids.NewID()
		if err != nil {
			return ports.ChargeChange{}, err
		}
		r := domain.Refund{ID: rid, ChargeID: c.ID(), AccountID: c.AccountID(), Mode: c.Mode(), Amount: amount,
			Currency: c.Currency(), Status: domain.RefundPending, Reason: in.Reason, Strategy: strategy,
			PassFeeToTenant: in.PassFeeToTenant, DestinationKey: in.DestinationKey, EndToEndID: st.EndToEndID,
			CreatedAt: now, UpdatedAt: now}
		if strategy == domain.StrategyCashout && in.PassFeeToTenant {
			r.Fee = domain.PixOutFee(pixOut, amount)
		}
		entries, err := s.refundEntries(ctx, c, tx, r, in.ReverseSplits, now)
		if err != nil {
			return ports.ChargeChange{}, err
		}
		*computed = true
		evid, err := s.ids.NewID()
		if err != nil {
			return ports.ChargeChange{}, err
		}
		ev, err := domain.RefundEvent(c, r, evid, now)
		if err != nil {
			return ports.ChargeChange{}, err
		}
		if *answer, err = respond(r); err != nil {
			return ports.ChargeChange{}, err
		}
		return ports.ChargeChange{Events: []domain.Event{ev}, Entries: entries, Refunds: []domain.Refund{r},
			Idempotency: a.Record(rid, *answer, now)}, nil
	}
}

// refundEntries debit refund r of c, just reserved: each split's part
// from its sub-account (takeBackSplits), the rest and the fee from the
// charge's account, which also covers what the sub-accounts' wallets
// could not — or the refund is refused (domain.ErrInsufficientBalance).
func (s *PaymentService) refundEntries(ctx context.Context, c *domain.Charge, tx ports.ChargeTx, r domain.Refund,
	explicit []domain.SplitReversal, now time.Time,
) ([]domain.JournalEntry, error) {
	w := newWallets(tx, c.Currency())
	tb, err := s.charges.takeBackSplits(ctx, c, w, r.ID, r.Amount, explicit, now)
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
	entry, err := domain.RefundEntry(eid, r, tb.reversed, bal, now)
	if err != nil {
		return nil, err
	}
	w.apply(entry)
	adv, err := s.charges.advance(ctx, c, w, c.AccountID(), r.ID, tb.short, false, now)
	if err != nil {
		return nil, err
	}
	return append(append(tb.entries, entry), adv...), nil
}
