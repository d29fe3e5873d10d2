package app

import (
	"context"
	"log/slog"

	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// PaymentsConfig tunes the payments surface.
type PaymentsConfig struct {
	Links domain.Links
	// PixOutFee is the default Pix-out fee (QUITA_FEE_PIX_OUT), charged
	// on a cashout refund with passFeeToTenant unless the account has its
	// own PIX_OUT schedule — the same fee as a payout's.
	PixOutFee domain.Fee
}

// PaymentService is the payments surface: refunds, lists, stats, wallets
// and the ledger, on the charges of ChargeService.
type PaymentService struct {
	charges  *ChargeService
	store    ports.PaymentStore
	cstore   ports.ChargeStore
	acquirer acquirer
	clock    ports.Clock
	ids      ports.IDGenerator
	log      *slog.Logger
	cfg      PaymentsConfig
	// refundsWake is signalled when a refund commits in this process, so
	// the refund worker starts on it at once instead of at its next poll.
	refundsWake chan struct{}
	// once is the charge service's runner: refunds share its key space.
	once *exactlyonce.Runner
}

// NewPaymentService wires the payments surface.
func NewPaymentService(charges *ChargeService, store ports.PaymentStore, cstore ports.ChargeStore, acquirer ports.Acquirer,
	clock ports.Clock, ids ports.IDGenerator, log *slog.Logger, cfg PaymentsConfig,
) *PaymentService {
	return &PaymentService{charges: charges, store: store, cstore: cstore, acquirer: acquirerOf(acquirer), clock: clock, ids: ids, log: log, cfg: cfg,
		refundsWake: make(chan struct{}, 1), once: charges.once}
}

// RefundsWake is signalled each time a refund commits in this process; the
// refund worker listens to it (other processes find the refund at their
// next poll).
func (s *PaymentService) RefundsWake() <-chan struct{} { return s.refundsWake }

// Charges is the charge service underneath.
func (s *PaymentService) Charges() *ChargeService { return s.charges }

// List returns a page of payments and the total.
// A payment whose expiry is final (past expires_at and the grace) reads
// as EXPIRED (and is persisted so), as on a single read.
func (s *PaymentService) List(ctx context.Context, q ports.PaymentQuery) ([]*domain.Charge, int, error) {
	cs, total, err := s.store.ListPayments(ctx, q)
	if err != nil {
		return nil, 0, err
	}
	now := s.clock.Now()
	for i, c := range cs {
		if s.charges.expiryDue(c, now) {
			if cs[i], err = s.charges.expireIfDue(ctx, q.Scope, c); err != nil {
				return nil, 0, err
			}
		}
	}
	return cs, total, nil
}

// Cancel closes an unsettled payment and removes its cob at the acquirer.
// A cycle's charge has no cob (its txid is the cycle's cobr's, which the
// cycle cancels once it follows its charge), so nothing is asked for it.
func (s *PaymentService) Cancel(ctx context.Context, caller Caller, id string) (*domain.Charge, error) {
	if _, err := s.charges.Get(ctx, caller, id); err != nil {
		return nil, err
	}
	c, err := s.charges.update(ctx, caller.Scope(), id, func(c *domain.Charge) error { return c.Cancel(s.clock.Now()) })
	if err != nil {
		return nil, err
	}
	if link, ok := c.Subscription(); ok && !link.FirstPayment() {
		return c, nil
	}
	if p := c.Pix(); p != nil {
		err := s.acquirer.CancelPixCharge(ctx, ports.CancelPixChargeRequest{Scope: caller.Scope(), ChargeID: id, TxID: p.TxID})
		if err != nil {
			// The cob expires on its own; a payment arriving meanwhile
			// finds a closed charge and is returned.
			s.log.WarnContext(ctx, "cancel at the acquirer failed", "charge", domain.PrefixCharge+id, "err", err)
		}
	}
	return c, nil
}

// ResendWebhook writes fresh events of the payment's current status to
// the outbox; the webhook dispatcher delivers them as new deliveries.
func (s *PaymentService) ResendWebhook(ctx context.Context, caller Caller, id string) (*domain.Charge, error) {
	if _, err := s.charges.Get(ctx, caller, id); err != nil {
		return nil, err
	}
	var out *domain.Charge
	err := s.cstore.UpdateCharge(ctx, caller.Scope(), id, func(_ context.Context, c *domain.Charge, _ ports.ChargeTx) (ports.ChargeChange, error) {
		out = c
		evs, err := domain.StatusEvents(c, s.cfg.Links, s.ids.NewID, s.clock.Now())
		return ports.ChargeChange{Events: evs}, err
	})
	return out, err
}
