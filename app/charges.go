package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// ChargesConfig tunes the charge service.
type ChargesConfig struct {
	Links domain.Links
	// Fees per payment method; a method without an entry costs nothing.
	Fees map[domain.Method]domain.FeeSchedule
	// AccountFees, when set, holds per-account overrides of Fees by
	// method, read when a charge settles.
	AccountFees ports.AccountFeeStore
	// Holding is how long each method's money stays pending (default
	// domain.DefaultHoldingPeriods).
	Holding domain.HoldingPeriods
	// IdempotencyLockTTL bounds how long a crashed request can hold a key
	// in the cache (default 30 s).
	IdempotencyLockTTL time.Duration
	// IdempotencyTTL is how long the cache keeps a response (default 24 h).
	// The database keeps it for good.
	IdempotencyTTL time.Duration
}

// Caller is an authenticated merchant request: the account and the mode of
// the API key it used.
type Caller struct {
	Account domain.Account
	Mode    domain.Mode
	// KeyFingerprint names the API key used, for audit entries.
	KeyFingerprint string
}

// Scope is the data the caller may touch.
func (c Caller) Scope() ports.Scope {
	return ports.Scope{AccountID: c.Account.ID, Mode: c.Mode}
}

// ChargeService creates, reads and settles charges.
type ChargeService struct {
	store    ports.ChargeStore
	records  ports.IdempotencyRecords
	cache    ports.IdempotencyCache
	acquirer acquirer
	clock    ports.Clock
	ids      ports.IDGenerator
	log      *slog.Logger
	cfg      ChargesConfig
	guard    *FraudGuard
	// background tracks work that outlives a request (FinalizeMethods).
	background sync.WaitGroup
}

// NewChargeService wires a charge service. Create refuses what guard
// refuses, before any acquirer call; a nil guard refuses nothing.
func NewChargeService(store ports.ChargeStore, records ports.IdempotencyRecords, cache ports.IdempotencyCache,
	acquirer ports.Acquirer, guard *FraudGuard, clock ports.Clock, ids ports.IDGenerator, log *slog.Logger, cfg ChargesConfig,
) *ChargeService {
	if cfg.IdempotencyLockTTL <= 0 {
		cfg.IdempotencyLockTTL = 30 * time.Second
	}
	if cfg.IdempotencyTTL <= 0 {
		cfg.IdempotencyTTL = 24 * time.Hour
	}
	if cfg.Holding == nil {
		cfg.Holding = domain.DefaultHoldingPeriods
	}
	return &ChargeService{store: store, records: records, cache: cache, acquirer: acquirerOf(acquirer), guard: guard,
		clock: clock, ids: ids, log: log, cfg: cfg}
}

// CreateChargeInput is a create request after decoding.
type CreateChargeInput struct {
	Amount      int64
	Currency    string
	Methods     []domain.Method
	Description string
	ExpiresIn   *int64
	Customer    domain.Customer
	// StrictDocument validates customer.document as CPF/CNPJ.
	StrictDocument bool
	CustomerRef    string
	ExpectedPayer  string
	Metadata       map[string]any
	WebhookURL     string
}

// Idempotency identifies a financial write: the merchant's key and the
// fingerprint of the request (method, path and canonical body).
type Idempotency struct {
	Key         string
	Fingerprint string
}

// Response is what a financial write answered, replayed verbatim on retry.
type Response struct {
	StatusCode int
	Body       []byte
	Replayed   bool
}

// Respond is how the calling surface answers a resource a financial write
// created: its status and body in that surface's wire format. App records
// the answer with the resource, in the same transaction, so that a retry
// with the same key gets it byte for byte (docs/decisions.md, "Who renders
// an idempotent answer").
type Respond[T any] func(T) (Response, error)

// Create opens a charge with the acquirer exactly once per idempotency key.
//
// The fast path claims the key in the cache; the guarantee is the database:
// the idempotency record is inserted in the same transaction as the charge
// under a unique key, and the txid sent to the acquirer is derived from the
// key, so a retry after a crash, a cache flush or a lost claim asks for the
// same cob and can never commit a second charge.
func (s *ChargeService) Create(ctx context.Context, caller Caller, in CreateChargeInput, idem Idempotency, respond Respond[*domain.Charge]) (Response, error) {
	scope := caller.Scope()
	dkey := ports.IdempotencyKey{Scope: scope, Key: idem.Key}
	ckey := "idem:" + scope.AccountID + ":" + string(scope.Mode) + ":" + idem.Key

	claim, err := s.cache.Begin(ctx, ckey, idem.Fingerprint, s.cfg.IdempotencyLockTTL)
	if err != nil {
		s.log.WarnContext(ctx, "idempotency cache unavailable, using the database alone", "err", err)
		claim = ports.Claim{}
	}
	switch claim.State {
	case ports.ClaimCompleted:
		if claim.Fingerprint != idem.Fingerprint {
			return Response{}, ErrIdempotencyKeyReused
		}
		return Response{StatusCode: claim.StatusCode, Body: claim.Body, Replayed: true}, nil
	case ports.ClaimInFlight:
		if claim.Fingerprint != idem.Fingerprint {
			return Response{}, ErrIdempotencyKeyReused
		}
		return Response{}, ErrIdempotencyKeyInUse
	}
	owned := claim.State == ports.ClaimAcquired
	completed := false
	defer func() {
		if owned && !completed {
			// A detached context: a cancelled request must still free the key.
			ctx := context.WithoutCancel(ctx)
			if err := s.cache.Release(ctx, ckey, idem.Fingerprint); err != nil {
				s.log.WarnContext(ctx, "release idempotency claim", "err", err)
			}
		}
	}()

	resp, err := s.replay(ctx, dkey, idem.Fingerprint)
	if err == nil {
		completed = s.complete(ctx, owned, ckey, idem.Fingerprint, resp)
		return resp, nil
	}
	if !errors.Is(err, ports.ErrNotFound) {
		return Response{}, err
	}

	resp, err = s.create(ctx, caller, in, dkey, idem, respond)
	if errors.Is(err, ports.ErrIdempotencyKeyExists) {
		// Another process committed the same key first: answer as it did.
		resp, err = s.replay(ctx, dkey, idem.Fingerprint)
	}
	if err != nil {
		return Response{}, err
	}
	completed = s.complete(ctx, owned, ckey, idem.Fingerprint, resp)
	return resp, nil
}

// replay answers from the durable record: the original response, or
// ErrIdempotencyKeyReused for a different request.
func (s *ChargeService) replay(ctx context.Context, key ports.IdempotencyKey, fingerprint string) (Response, error) {
	rec, err := s.records.GetIdempotencyRecord(ctx, key)
	if err != nil {
		return Response{}, err
	}
	if rec.Fingerprint != fingerprint {
		return Response{}, ErrIdempotencyKeyReused
	}
	return Response{StatusCode: rec.StatusCode, Body: rec.Body, Replayed: true}, nil
}

func (s *ChargeService) complete(ctx context.Context, owned bool, ckey, fingerprint string, resp Response) bool {
	if !owned {
		return false
	}
	err := s.cache.Complete(ctx, ckey, fingerprint, resp.StatusCode, resp.Body, s.cfg.IdempotencyTTL)
	if err != nil {
		s.log.WarnContext(ctx, "cache idempotent response", "err", err)
		return false
	}
	return true
}

func (s *ChargeService) create(ctx context.Context, caller Caller, in CreateChargeInput, key ports.IdempotencyKey, idem Idempotency, respond Respond[*domain.Charge]) (Response, error) {
	id, err := s.ids.NewID()
	if err != nil {
		return Response{}, err
	}
	now := s.clock.Now()
	c, err := domain.NewCharge(domain.NewChargeParams{
		ID: id, AccountID: caller.Account.ID, Mode: caller.Mode,
		Amount: in.Amount, Currency: in.Currency, Methods: in.Methods,
		Description: in.Description, ExpiresIn: in.ExpiresIn, DefaultExpiry: caller.Account.DefaultExpiry,
		Customer: in.Customer, StrictDocument: in.StrictDocument, CustomerRef: in.CustomerRef,
		ExpectedPayer: in.ExpectedPayer, Metadata: in.Metadata, WebhookURL: in.WebhookURL, Now: now,
	})
	if err != nil {
		return Response{}, err
	}
	if err := s.guard.Check(ctx, caller, ChargeAttempt{Amount: c.Amount(), PayerDocument: payerDocument(c)}); err != nil {
		return Response{}, err
	}
	txid := domain.DeriveTxID(key.AccountID, string(key.Mode), key.Key)
	if slices.Contains(c.Methods(), domain.MethodPix) {
		cob, err := s.acquirer.CreatePixCharge(ctx, ports.CreatePixChargeRequest{
			Scope: key.Scope, ChargeID: id, TxID: txid, Amount: c.Amount(), ExpiresAt: c.ExpiresAt(),
			Description: in.Description, PayerTaxID: c.ExpectedPayer(), PayerName: in.Customer.Name,
			MerchantName: caller.Account.MerchantName, MerchantCity: caller.Account.MerchantCity,
		})
		if err != nil {
			return Response{}, fmt.Errorf("create pix charge: %w", err)
		}
		pix := domain.PixDetails{BRCode: cob.BRCode, TxID: cob.TxID, Location: cob.Location, ExpiresAt: cob.ExpiresAt}
		if err := c.AttachPix(pix, s.acquirer.nameFor(key.Scope), cob.ProviderRef, now); err != nil {
			return Response{}, err
		}
	}
	// Method data other than the cob is filled asynchronously
	// (FinalizeMethods): the create answers WAITING_PAYMENT at once.
	provider := s.acquirer.nameFor(key.Scope)
	if c.NeedsMethodData() {
		err = c.AwaitMethods(provider, now)
	} else if c.Status() == domain.TxPending {
		err = c.AttachMethods(domain.MethodDetails{}, provider, "", now)
	}
	if err != nil {
		return Response{}, err
	}
	events, err := domain.NewChargeEvents(c, "", domain.CreationEvents(), s.cfg.Links, s.ids.NewID, now)
	if err != nil {
		return Response{}, err
	}
	answer, err := respond(c)
	if err != nil {
		return Response{}, err
	}
	rec := &ports.IdempotencyRecord{
		IdempotencyKey: key, Fingerprint: idem.Fingerprint, ResourceID: id,
		StatusCode: answer.StatusCode, Body: answer.Body, CreatedAt: now,
	}
	if err := s.store.CreateCharge(ctx, c, events, rec); err != nil {
		return Response{}, err
	}
	if c.MethodsPending() {
		s.finalizeInBackground(key.Scope, id)
	}
	s.log.InfoContext(ctx, "charge created", "charge", domain.PrefixCharge+id, "amount", c.Amount(), "mode", string(caller.Mode))
	return Response{StatusCode: rec.StatusCode, Body: rec.Body}, nil
}

// payerDocument is the document the fraud guard counts: the payer lock,
// or else the customer's document.
func payerDocument(c *domain.Charge) string {
	if p := c.ExpectedPayer(); p != "" {
		return p
	}
	return c.Snapshot().Customer.Document
}

// Get reads a charge of the caller. A charge past its expiry is expired
// (and persisted so) before it is returned.
func (s *ChargeService) Get(ctx context.Context, caller Caller, id string) (*domain.Charge, error) {
	c, err := s.store.GetCharge(ctx, caller.Scope(), id)
	if err != nil {
		return nil, err
	}
	return s.expireIfDue(ctx, caller.Scope(), c)
}

// stored reads a charge of scope as stored, without expiring it.
func (s *ChargeService) stored(ctx context.Context, scope ports.Scope, id string) (*domain.Charge, error) {
	return s.store.GetCharge(ctx, scope, id)
}

// GetPublic reads a charge by raw id alone, for the hosted checkout.
func (s *ChargeService) GetPublic(ctx context.Context, id string) (*domain.Charge, error) {
	c, err := s.store.GetChargeByID(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.expireIfDue(ctx, ports.Scope{AccountID: c.AccountID(), Mode: c.Mode()}, c)
}

func (s *ChargeService) expireIfDue(ctx context.Context, scope ports.Scope, c *domain.Charge) (*domain.Charge, error) {
	now := s.clock.Now()
	if !c.ExpiredAt(now) {
		return c, nil
	}
	updated, err := s.expire(ctx, scope, c.ID(), now)
	if errors.Is(err, domain.ErrChargeNotExpirable) {
		// Settled or closed by someone else meanwhile: read it again.
		return s.store.GetCharge(ctx, scope, c.ID())
	}
	return updated, err
}

// ListCharges lists the caller's charges, newest first.
func (s *ChargeService) List(ctx context.Context, q ports.ChargeQuery) ([]*domain.Charge, bool, error) {
	cs, more, err := s.store.ListCharges(ctx, q)
	if err != nil {
		return nil, false, err
	}
	now := s.clock.Now()
	for i, c := range cs {
		if c.ExpiredAt(now) {
			if cs[i], err = s.expireIfDue(ctx, q.Scope, c); err != nil {
				return nil, false, err
			}
		}
	}
	return cs, more, nil
}

// expire closes a due charge and writes its events in one transaction.
func (s *ChargeService) expire(ctx context.Context, scope ports.Scope, id string, now time.Time) (*domain.Charge, error) {
	return s.update(ctx, scope, id, func(c *domain.Charge) error { return c.Expire(now) })
}

// feesFor is the fee schedule of an account: the configured schedule with
// the account's overrides on top. A failure to read the overrides fails
// the settlement rather than charge the wrong fee.
func (s *ChargeService) feesFor(ctx context.Context, accountID string) (map[domain.Method]domain.FeeSchedule, error) {
	if s.cfg.AccountFees == nil {
		return s.cfg.Fees, nil
	}
	over, err := s.cfg.AccountFees.AccountFees(ctx, accountID)
	if err != nil {
		return nil, fmt.Errorf("account fees: %w", err)
	}
	if len(over) == 0 {
		return s.cfg.Fees, nil
	}
	out := make(map[domain.Method]domain.FeeSchedule, len(s.cfg.Fees)+len(over))
	for m, f := range s.cfg.Fees {
		out[m] = f
	}
	for m, f := range over {
		out[m] = f
	}
	return out, nil
}

// putAccountFee stores an account's override of one method's fees; the
// settlements that follow read it (feesFor).
func (s *ChargeService) putAccountFee(ctx context.Context, accountID string, m domain.Method, f domain.FeeSchedule) error {
	if s.cfg.AccountFees == nil {
		return errors.New("account fees are not configured")
	}
	return s.cfg.AccountFees.PutAccountFee(ctx, accountID, m, f, s.clock.Now())
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
// finalisation), for graceful shutdown and tests.
func (s *ChargeService) WaitBackground() { s.background.Wait() }

// update applies change under the row lock and writes, in the same
// transaction, the events of the resulting transition and the ledger entry
// that credits the merchant when the change settled the charge.
func (s *ChargeService) update(ctx context.Context, scope ports.Scope, id string, change func(*domain.Charge) error) (*domain.Charge, error) {
	var out *domain.Charge
	err := s.store.UpdateCharge(ctx, scope, id, func(_ context.Context, c *domain.Charge, _ ports.ChargeTx) (ports.ChargeChange, error) {
		prev := c.Status()
		wasCredited := c.Credited()
		if err := change(c); err != nil {
			return ports.ChargeChange{}, err
		}
		out = c
		now := s.clock.Now()
		evs, err := domain.NewChargeEvents(c, prev, domain.TransitionEvents(prev, c.Status()), s.cfg.Links, s.ids.NewID, now)
		if err != nil {
			return ports.ChargeChange{}, err
		}
		ch := ports.ChargeChange{Events: evs}
		if !wasCredited && c.Credited() {
			eid, err := s.ids.NewID()
			if err != nil {
				return ports.ChargeChange{}, err
			}
			e, err := domain.PaymentEntry(eid, c, s.cfg.Holding, now)
			if err != nil {
				return ports.ChargeChange{}, err
			}
			ch.Entries = append(ch.Entries, e)
		}
		return ch, nil
	})
	return out, err
}
