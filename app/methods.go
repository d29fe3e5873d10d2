package app

import (
	"context"
	"fmt"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// FinalizePendingMethods is the recovery worker of method data: charges
// still pending a second after create (the process died, or the acquirer
// failed) are finalised now.
func (s *PaymentService) FinalizePendingMethods(ctx context.Context) (int, error) {
	refs, err := s.store.ListMethodsPending(ctx, s.clock.Now().Add(-time.Second), workerBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range refs {
		if err := s.charges.FinalizeMethods(ctx, r.Scope, r.ID); err != nil {
			s.log.WarnContext(ctx, "method data not finalised; will retry", "charge", domain.PrefixCharge+r.ID, "err", err)
			continue
		}
		n++
	}
	return n, nil
}

// FinalizeMethods asks the acquirer for the data of a charge's methods
// other than Pix (boleto, Multibanco, card redirect, crypto address) and
// records it. It runs in the background right after create and, for
// charges a crash left pending, from the recovery worker; the acquirer call
// is idempotent by charge id and the record is written only while the
// charge is still pending, so running it twice is harmless.
func (s *ChargeService) FinalizeMethods(ctx context.Context, scope ports.Scope, id string) error {
	c, err := s.store.GetCharge(ctx, scope, id)
	if err != nil || !c.MethodsPending() {
		return err
	}
	ma := s.acquirer.methods
	if ma == nil {
		return fmt.Errorf("%w: the acquirer supports only pix", ports.ErrAcquirerRejected)
	}
	var others []domain.Method
	for _, m := range c.Methods() {
		if m != domain.MethodPix && m != domain.MethodMBWay {
			others = append(others, m)
		}
	}
	returnURL, _ := domain.MetadataString(c.Metadata()["returnUrl"])
	d, err := ma.CreatePaymentMethods(ctx, ports.CreateMethodsRequest{
		Scope: scope, ChargeID: id, Methods: others, Amount: c.Amount(), Currency: c.Currency(),
		ExpiresAt: c.ExpiresAt(), CustomerName: c.Customer().Name, ReturnURL: returnURL,
	})
	if err != nil {
		return fmt.Errorf("create payment methods: %w", err)
	}
	return s.store.UpdateCharge(ctx, scope, id, func(_ context.Context, c *domain.Charge, _ ports.ChargeTx) (ports.ChargeChange, error) {
		if !c.MethodsPending() {
			return ports.ChargeChange{}, nil
		}
		return ports.ChargeChange{}, c.AttachMethods(d, s.acquirer.nameFor(scope), id, s.clock.Now())
	})
}

// finalizeInBackground runs FinalizeMethods after the create request has
// answered. A failure is left to the recovery worker.
func (s *ChargeService) finalizeInBackground(scope ports.Scope, id string) {
	s.background.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.FinalizeMethods(ctx, scope, id); err != nil {
			s.log.WarnContext(ctx, "method data deferred to the recovery worker", "charge", domain.PrefixCharge+id, "err", err)
		}
	})
}

// WaitBackground waits for background work started by requests (method
// finalisation, the idempotency cache's marks and drops), for graceful
// shutdown and tests.
func (s *ChargeService) WaitBackground() {
	s.background.Wait()
	s.once.Wait()
}
