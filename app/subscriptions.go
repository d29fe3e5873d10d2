package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/ports"
)

// ErrRecurringNotSupported: the acquirer of the caller's mode has no Pix
// Automático.
var ErrRecurringNotSupported = errors.New("the acquirer does not support Pix Automático")

// SubscriptionsConfig tunes the subscription service.
type SubscriptionsConfig struct {
	Links domain.Links
	// Recheck is how long an open cycle (and, in live mode, a mandate)
	// waits before the worker looks at it again, should no notification
	// come first (default DefaultSubscriptionRecheck).
	Recheck time.Duration
	// Lease is how long a worker's claim on a subscription or a cycle
	// holds; one whose worker stopped comes back after it (default 1
	// minute).
	Lease time.Duration
}

// DefaultSubscriptionRecheck is SubscriptionsConfig.Recheck when unset.
const DefaultSubscriptionRecheck = 10 * time.Minute

// SubscriptionService runs subscriptions (Pix Automático): the mandate's
// life, the schedule of cycles, each cycle's charge and its debits. Each
// cycle's charge is a charge of ChargeService, so paying it credits the
// wallet, and refunds, receipts and disputes work as for any Pix.
type SubscriptionService struct {
	charges  *ChargeService
	store    ports.SubscriptionStore
	accounts ports.AccountStore
	acquirer acquirer
	clock    ports.Clock
	ids      ports.IDGenerator
	log      *slog.Logger
	cfg      SubscriptionsConfig
	// once is the charge service's runner: subscription creates share the
	// key space of every money write.
	once *exactlyonce.Runner
	// wake is signalled when a change in this process gives the worker
	// something to do now.
	wake chan struct{}
}

// NewSubscriptionService wires the subscription service on the charge
// service, whose charges collect the cycles, and registers itself to hear
// of every change of those charges.
func NewSubscriptionService(charges *ChargeService, store ports.SubscriptionStore, accounts ports.AccountStore, acquirer ports.Acquirer,
	clock ports.Clock, ids ports.IDGenerator, log *slog.Logger, cfg SubscriptionsConfig,
) *SubscriptionService {
	if cfg.Recheck <= 0 {
		cfg.Recheck = DefaultSubscriptionRecheck
	}
	if cfg.Lease <= 0 {
		cfg.Lease = time.Minute
	}
	s := &SubscriptionService{charges: charges, store: store, accounts: accounts, acquirer: acquirerOf(acquirer), clock: clock, ids: ids, log: log,
		cfg: cfg, once: charges.once, wake: make(chan struct{}, 1)}
	charges.subscriptionCharge = s.chargeChanged
	return s
}

// Wake is signalled when a change in this process gives the worker
// something to do now (a mandate authorised, an amount set).
func (s *SubscriptionService) Wake() <-chan struct{} { return s.wake }

func (s *SubscriptionService) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// CreateSubscriptionInput is a create request after decoding.
type CreateSubscriptionInput struct {
	Customer     domain.Customer
	Amount       *int64
	Variable     bool
	MaxAmount    *int64
	Interval     domain.Interval
	StartDate    bizdays.Date
	EndDate      bizdays.Date
	Contract     string
	Description  string
	RetryPolicy  domain.RetryPolicy
	Journey      domain.Journey
	FirstPayment *int64
	// PayerAccount is where an authorization_request's request goes
	// (optional; an acquirer that needs it refuses without it).
	PayerAccount *domain.PayerAccount
}

// Create opens a subscription exactly once per idempotency key (the
// charges' rules: replay, 409 reused, 409 in use) and answers it as
// respond renders it. It reads validate → attempt → acquirer → commit:
// for qr_code_with_first_payment the first payment's cob is asked for
// under the attempt's txid (its intent kept first, as a charge's), then
// the mandate (rec, and for authorization_request its solicrec), and the
// subscription, its first payment's charge, their events and the record
// commit in one transaction.
func (s *SubscriptionService) Create(ctx context.Context, caller Caller, in CreateSubscriptionInput, idem Idempotency,
	respond Respond[*domain.Subscription],
) (Response, error) {
	opts := exactlyonce.Options{LiveCob: in.Journey == domain.JourneyQRCodeWithFirstPayment}
	return s.once.Do(ctx, caller.Scope(), idem, opts, func(a *exactlyonce.Attempt) (Response, error) {
		return s.create(ctx, caller, in, a, respond)
	})
}

func (s *SubscriptionService) create(ctx context.Context, caller Caller, in CreateSubscriptionInput, a *exactlyonce.Attempt,
	respond Respond[*domain.Subscription],
) (Response, error) {
	id, err := s.ids.NewID()
	if err != nil {
		return Response{}, err
	}
	now := s.clock.Now()
	sub, err := domain.NewSubscription(domain.NewSubscriptionParams{ID: id, AccountID: caller.Account.ID, Mode: caller.Mode,
		Customer: in.Customer, Amount: in.Amount, Variable: in.Variable, MaxAmount: in.MaxAmount, Interval: in.Interval,
		StartDate: in.StartDate, EndDate: in.EndDate, Contract: in.Contract, Description: in.Description,
		RetryPolicy: in.RetryPolicy, Journey: in.Journey, FirstPayment: in.FirstPayment, PayerAccount: in.PayerAccount, Now: now})
	if err != nil {
		return Response{}, err
	}
	scope := a.Key.Scope
	rec := s.acquirer.recurring
	if rec == nil {
		return Response{}, ErrRecurringNotSupported
	}
	req := ports.CreateRecurrenceRequest{Scope: scope, SubscriptionID: id, Key: domain.DeriveTxID("rec", scope.AccountID, string(scope.Mode), a.Key.Key),
		DebtorName: sub.Payer().Name, DebtorTaxID: domain.NormalizeTaxID(sub.Payer().Document), Contract: sub.Contract(),
		Object: sub.Description(), StartDate: sub.StartDate(), EndDate: sub.EndDate(), Interval: sub.Interval(), Amount: sub.Amount(),
		RetryPolicy: sub.RetryPolicy(), Journey: sub.Journey(), MerchantName: caller.Account.MerchantName,
		MerchantCity: caller.Account.MerchantCity, PayerAccount: sub.PayerAccount()}
	var (
		first    *domain.Charge
		firstEvs []domain.Event
	)
	if sub.Journey() == domain.JourneyQRCodeWithFirstPayment {
		if first, err = s.firstPayment(ctx, caller, sub, a, now); err != nil {
			return Response{}, err
		}
		req.FirstPaymentTxID, req.FirstPaymentBRCode = first.Pix().TxID, first.Pix().BRCode
		sub.SetFirstCharge(first.ID())
		if firstEvs, err = domain.NewChargeEvents(first, "", domain.CreationEvents(), s.cfg.Links, s.ids.NewID, now); err != nil {
			return Response{}, err
		}
	}
	r, err := rec.CreateRecurrence(ctx, req)
	if err != nil {
		return Response{}, fmt.Errorf("create the recurrence: %w", err)
	}
	m := domain.Mandate{RecID: r.RecID, BRCode: r.BRCode, Location: r.Location}
	if sub.Journey() == domain.JourneyAuthorizationRequest {
		ar, err := rec.RequestAuthorization(ctx, ports.AuthorizationRequest{Scope: scope, RecID: r.RecID,
			DebtorTaxID: req.DebtorTaxID, ExpiresAt: sub.AuthorizationExpiresAt(), PayerAccount: sub.PayerAccount()})
		if err != nil {
			return Response{}, fmt.Errorf("request the authorization: %w", err)
		}
		m.SolicRecID, m.SolicRecStatus = ar.SolicRecID, ar.Status
	}
	if err := sub.AttachMandate(m, now); err != nil {
		return Response{}, err
	}
	if recheck := now.Add(s.cfg.Recheck); scope.Mode == domain.ModeLive && recheck.Before(sub.NextRunAt()) {
		sub.SetNextRunAt(recheck) // the payer answers at the PSP: ask it
	}
	evs, err := domain.NewSubscriptionEvents(sub, []domain.EventType{domain.EventSubscriptionCreated}, s.cfg.Links, s.ids.NewID, now)
	if err != nil {
		return Response{}, err
	}
	answer, err := respond(sub)
	if err != nil {
		return Response{}, err
	}
	record := a.Record(domain.PrefixSubscription+id, answer, now)
	if err := s.store.CreateSubscription(ctx, sub, evs, first, firstEvs, record); err != nil {
		return Response{}, err
	}
	s.log.InfoContext(ctx, "subscription created", "subscription", domain.PrefixSubscription+id, "journey", string(sub.Journey()),
		"mode", string(scope.Mode))
	return Response{StatusCode: record.StatusCode, Body: record.Body}, nil
}

// firstPayment is the charge of a qr_code_with_first_payment
// subscription's first payment with its cob, opened under the attempt's
// txid as any charge's: payable until the mandate's authorisation
// deadline, through the fraud guard like any charge a request creates.
func (s *SubscriptionService) firstPayment(ctx context.Context, caller Caller, sub *domain.Subscription, a *exactlyonce.Attempt,
	now time.Time,
) (*domain.Charge, error) {
	cid, err := s.ids.NewID()
	if err != nil {
		return nil, err
	}
	c, err := domain.NewCharge(domain.NewChargeParams{ID: cid, AccountID: caller.Account.ID, Mode: caller.Mode,
		Amount: sub.FirstPayment(), Currency: string(domain.CurrencyBRL), Methods: []domain.Method{domain.MethodPix},
		Description: sub.Description(), Customer: sub.Customer(), StrictDocument: true,
		Subscription: &domain.ChargeSubscription{ID: sub.ID()}, ExpiresAt: sub.FirstChargeExpiresAt(), Now: now})
	if err != nil {
		return nil, err
	}
	if err := s.charges.guard.Check(ctx, caller, ChargeAttempt{Amount: c.Amount(), PayerDocument: c.Customer().Document, Key: a.Key.Key}); err != nil {
		return nil, err
	}
	txid, err := a.BeforeCob(ctx)
	if err != nil {
		return nil, err
	}
	scope := a.Key.Scope
	cob, err := s.acquirer.CreatePixCharge(ctx, ports.CreatePixChargeRequest{Scope: scope, ChargeID: cid, TxID: txid, Amount: c.Amount(),
		ExpiresAt: c.ExpiresAt(), Description: sub.Description(), PayerName: c.Customer().Name,
		MerchantName: caller.Account.MerchantName, MerchantCity: caller.Account.MerchantCity})
	if err != nil {
		return nil, fmt.Errorf("create the first payment's pix charge: %w", err)
	}
	pix := domain.PixDetails{BRCode: cob.BRCode, TxID: cob.TxID, Location: cob.Location, ExpiresAt: cob.ExpiresAt}
	if err := c.AttachPix(pix, s.acquirer.nameFor(scope), cob.ProviderRef, now); err != nil {
		return nil, err
	}
	return c, nil
}

// Get reads a subscription of the caller. A mandate still pending past its
// deadline is expired, and persisted so, before it is returned.
func (s *SubscriptionService) Get(ctx context.Context, caller Caller, id string) (*domain.Subscription, error) {
	sub, err := s.store.GetSubscription(ctx, caller.Scope(), id)
	if err != nil {
		return nil, err
	}
	return s.expireIfDue(ctx, caller.Scope(), sub)
}

// GetPublic reads a subscription by raw id alone, for its hosted page.
func (s *SubscriptionService) GetPublic(ctx context.Context, id string) (*domain.Subscription, error) {
	sub, err := s.store.GetSubscriptionByID(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.expireIfDue(ctx, ports.Scope{AccountID: sub.AccountID(), Mode: sub.Mode()}, sub)
}

func (s *SubscriptionService) expireIfDue(ctx context.Context, scope ports.Scope, sub *domain.Subscription) (*domain.Subscription, error) {
	if sub.Status() != domain.SubscriptionPendingAuthorization || s.clock.Now().Before(sub.AuthorizationExpiresAt()) {
		return sub, nil
	}
	out, err := s.expire(ctx, scope, sub.ID())
	if errors.Is(err, domain.ErrSubscriptionNotPending) {
		return s.store.GetSubscription(ctx, scope, sub.ID())
	}
	return out, err
}

// List lists the caller's subscriptions, newest first.
func (s *SubscriptionService) List(ctx context.Context, q ports.SubscriptionQuery) ([]*domain.Subscription, bool, error) {
	subs, more, err := s.store.ListSubscriptions(ctx, q)
	if err != nil {
		return nil, false, err
	}
	for i, sub := range subs {
		if subs[i], err = s.expireIfDue(ctx, q.Scope, sub); err != nil {
			return nil, false, err
		}
	}
	return subs, more, nil
}

// Charges lists a subscription's charges, latest cycle first (the first
// payment last); a charge whose expiry is final reads expired, as in any
// list of charges.
func (s *SubscriptionService) Charges(ctx context.Context, q ports.SubscriptionChargeQuery) ([]*domain.Charge, bool, error) {
	if _, err := s.store.GetSubscription(ctx, q.Scope, q.SubscriptionID); err != nil {
		return nil, false, err
	}
	cs, more, err := s.store.ListSubscriptionCharges(ctx, q)
	if err != nil {
		return nil, false, err
	}
	now := s.clock.Now()
	for i, c := range cs {
		if s.charges.expiryDue(c, now) {
			if cs[i], err = s.charges.expireIfDue(ctx, q.Scope, c); err != nil {
				return nil, false, err
			}
		}
	}
	return cs, more, nil
}

// SetNextAmount sets the amount of a variable subscription's next cycle,
// up to its max_amount, before the cycle's window closes
// (domain.Subscription.SetNextAmount); the worker creates the cycle's
// charge once its window is open.
func (s *SubscriptionService) SetNextAmount(ctx context.Context, caller Caller, id string, amount int64) (*domain.Subscription, error) {
	out, err := s.update(ctx, caller.Scope(), id, func(_ context.Context, sub *domain.Subscription, _ ports.SubscriptionTx, now time.Time) ([]domain.EventType, ports.SubscriptionChange, error) {
		return nil, ports.SubscriptionChange{}, sub.SetNextAmount(amount, domain.BrasiliaDate(now), now)
	})
	if err == nil {
		s.poke()
	}
	return out, err
}

// Cancel ends a subscription at the merchant's request: the mandate is
// cancelled at the acquirer first (so no debit it holds can still be
// made), then the subscription and its open cycles, whose charges follow.
func (s *SubscriptionService) Cancel(ctx context.Context, caller Caller, id string) (*domain.Subscription, error) {
	sub, err := s.Get(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	if sub.Status().Terminal() {
		return nil, domain.ErrSubscriptionNotCancellable
	}
	if s.acquirer.recurring == nil {
		return nil, ErrRecurringNotSupported
	}
	if recID := sub.Mandate().RecID; recID != "" {
		if err := s.acquirer.recurring.CancelRecurrence(ctx, ports.CancelRecurrenceRequest{Scope: caller.Scope(), RecID: recID}); err != nil {
			return nil, fmt.Errorf("cancel the recurrence: %w", err)
		}
	}
	return s.cancel(ctx, caller.Scope(), id, domain.CancelledByMerchant)
}
