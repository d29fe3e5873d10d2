package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

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

// AnswerPublic is the charges surface's answer to a create: 201 with the
// charge's public object (domain.Charge.Public over ChargesConfig.Links),
// the bytes its charge.created event carries as data.object, taken from
// that event rather than encoded a second time (issue 17). It is the nil
// Respond: ChargeService.Create answers it itself.
var AnswerPublic Respond[*domain.Charge]

// Create opens a charge with the acquirer exactly once per idempotency key,
// and answers it as respond renders it (AnswerPublic: the charge's public
// object).
//
// The fast path claims the key in the cache; the guarantee is the database:
// the idempotency record is inserted in the same transaction as the charge
// under a unique key, so a retry after a crash, a cache flush or a lost
// claim can never commit a second charge.
//
// With the shared cache (Redis) and its cob intents (ChargesConfig.
// CobIntents), a create whose claim the cache acquired skips the database's
// replay check (issue 17): its cob intent goes to the cache, its cob gets a
// txid of its own, and a create that then finds the key used after all (the
// cache lost the answer) answers from the database — the original answer,
// or 409 for another request — while the sweep cancels the cob it opened.
// Otherwise a live Pix create records its cob intent in the round trip of
// the database's replay check (IdempotencyRecordOrIntent), before the
// request is validated, and asks for the txid derived from the key, so a
// retry asks for the same cob; create deletes the intent again if it fails
// before asking for the cob.
func (s *ChargeService) Create(ctx context.Context, caller Caller, in CreateChargeInput, idem Idempotency, respond Respond[*domain.Charge]) (Response, error) {
	key := ports.IdempotencyKey{Scope: caller.Scope(), Key: idem.Key}
	livePix := caller.Mode == domain.ModeLive && slices.Contains(in.Methods, domain.MethodPix)
	// The replay check's intent, used only if the check runs.
	var intent *ports.ProviderIntent
	if s.cfg.Intents != nil && livePix {
		intent = &ports.ProviderIntent{Key: key, TxID: domain.DeriveTxID(key.AccountID, string(key.Mode), key.Key), CreatedAt: s.clock.Now()}
	}
	// The cache's intent, recorded while the key is claimed (one Redis
	// round trip for both) and used only if the claim skips the check.
	var early *earlyIntent
	if s.cfg.CobIntents != nil && livePix {
		raw, err := s.ids.NewID()
		if err != nil {
			return Response{}, err
		}
		early = s.recordEarly(ports.ProviderIntent{Key: key, TxID: domain.CobTxID(raw), CreatedAt: s.clock.Now()})
	}
	used := false
	resp, err := s.runIdempotent(ctx, caller.Scope(), idem, intent, s.cfg.CobIntents != nil, func(dkey ports.IdempotencyKey, checked bool) (Response, error) {
		plan := cobPlan{dbIntent: intent != nil && checked}
		switch {
		case checked:
			plan.txid = domain.DeriveTxID(key.AccountID, string(key.Mode), key.Key)
		case early != nil:
			used = true
			plan.txid, plan.early = early.in.TxID, early
		default: // no live cob to cover (test mode, or no Pix)
			raw, err := s.ids.NewID()
			if err != nil {
				return Response{}, err
			}
			plan.txid = domain.CobTxID(raw)
		}
		return s.create(ctx, caller, in, dkey, idem, respond, plan)
	})
	if early != nil && !used {
		s.dropLater(early) // the key was answered, refused or checked: no cob of this txid
	}
	return resp, err
}

// cobPlan is which txid a create asks for and where its cob intent goes.
type cobPlan struct {
	txid string
	// dbIntent: the replay check recorded the intent in the database.
	dbIntent bool
	// early: the intent the cache is recording since the claim (Create).
	early *earlyIntent
}

// earlyIntent is a cob intent the cache records while the request's key
// is being claimed, so the claim and the intent's write go to Redis
// together; the cob waits for it (wait).
type earlyIntent struct {
	in ports.ProviderIntent
	// wait returns once the intent is recorded, or why it is not.
	wait func() error
}

// recordEarly starts recording in in the cache, without waiting: the
// request sends it itself, before its claim (ports.CobIntents.
// StartCobIntent), so it travels in its claim's batch; a batcher sending
// the intents of concurrent creates in one command would land each a
// Redis round trip behind its claim (0.7 ms a create).
func (s *ChargeService) recordEarly(in ports.ProviderIntent) *earlyIntent {
	return &earlyIntent{in: in, wait: s.cfg.CobIntents.StartCobIntent(context.Background(), in)}
}

// dropLater removes e from the cache once it is recorded, off the
// request's path: its create committed (the charge holds its txid) or
// asked for no cob. The drops of concurrent creates go in one command
// (ChargeService.intentDrops). A drop that fails leaves the intent to the
// sweep, which settles it either way.
func (s *ChargeService) dropLater(e *earlyIntent) {
	s.intentDrops.add(e, s.background.Go, s.dropIntents)
}

func (s *ChargeService) dropIntents(batch []*earlyIntent) {
	ins := make([]ports.ProviderIntent, 0, len(batch))
	for _, e := range batch {
		if e.wait() == nil { // else never recorded
			ins = append(ins, e.in)
		}
	}
	if len(ins) == 0 {
		return // none was recorded: nothing to drop, no call
	}
	if err := s.cfg.CobIntents.DropCobIntent(context.Background(), ins...); err != nil {
		s.log.Warn("drop cob intents", "count", len(ins), "err", err)
	}
}

func (s *ChargeService) create(ctx context.Context, caller Caller, in CreateChargeInput, key ports.IdempotencyKey, idem Idempotency,
	respond Respond[*domain.Charge], plan cobPlan,
) (_ Response, err error) {
	cobAsked := false
	if plan.dbIntent {
		defer func() {
			if err == nil || cobAsked {
				return // the batch settled it, or the sweep will
			}
			// Refused before any cob exists: nothing for the sweep to cancel.
			if err := s.cfg.Intents.DeleteProviderIntent(context.WithoutCancel(ctx), key); err != nil {
				s.log.WarnContext(ctx, "delete the intent of a refused create", "err", err)
			}
		}()
	}
	// This create's intent in the cache, dropped once its charge commits
	// or, refused before any cob, at once.
	cached := plan.early
	defer func() {
		if cached != nil && (err == nil || !cobAsked) {
			s.dropLater(cached)
		}
	}()
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
	// The one check of a create that depends on the network (DNS), so it
	// runs here, inside the idempotent run, never before the replay check:
	// a DNS outage or a retired host must not turn a retry into a 400. It
	// runs outside the request's admission place (urlChecks); a refusal
	// to take one again fails the create like any error here: the key is
	// released, the intent deleted.
	if in.WebhookURL != "" && s.webhookURLs != nil {
		if err := s.webhookURLs.check(ctx, caller, in.WebhookURL); err != nil {
			return Response{}, err
		}
	}
	if err := s.guard.Check(ctx, caller, ChargeAttempt{Amount: c.Amount(), PayerDocument: payerDocument(c), Key: key.Key}); err != nil {
		return Response{}, err
	}
	txid := plan.txid
	// Whether the store holds this create's cob intent, for the commit to
	// settle: the replay check recorded it, or the fallback below does.
	intentInStore := plan.dbIntent
	if slices.Contains(c.Methods(), domain.MethodPix) {
		// The intent is written (and committed) before the cob exists:
		// whatever happens next, the sweep can find the cob if no charge
		// holding its txid commits.
		intent := ports.ProviderIntent{Key: key, TxID: txid, CreatedAt: now}
		switch {
		case key.Mode != domain.ModeLive, plan.dbIntent: // test cobs cannot be paid; or recorded already
		case cached != nil:
			if err := cached.wait(); err != nil {
				return Response{}, fmt.Errorf("%w: %w", ports.ErrStoreUnavailable, err)
			}
		case s.cfg.Intents != nil: // a charge's methods are the request's, so only if that changes
			if err := s.cfg.Intents.RecordProviderIntent(ctx, intent); err != nil {
				return Response{}, err
			}
			intentInStore = true
		}
		cobAsked = true
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
	answer, err := s.answerCreate(c, events, respond)
	if err != nil {
		return Response{}, err
	}
	rec := &ports.IdempotencyRecord{
		IdempotencyKey: key, Fingerprint: idem.Fingerprint, ResourceID: id,
		StatusCode: answer.StatusCode, Body: answer.Body, CreatedAt: now,
		SettlesIntent: intentInStore,
	}
	if err := s.store.CreateCharge(ctx, c, events, rec); err != nil {
		return Response{}, err
	}
	if c.MethodsPending() {
		s.finalizeInBackground(key.Scope, id)
	}
	logCreated(ctx, s.log, id, c.Amount(), caller.Mode)
	return Response{StatusCode: rec.StatusCode, Body: rec.Body}, nil
}

// answerCreate is a create's answer by respond: for AnswerPublic, the
// data.object of its canonical event, the charge's public object encoded
// once for both.
func (s *ChargeService) answerCreate(c *domain.Charge, events []domain.Event, respond Respond[*domain.Charge]) (Response, error) {
	if respond != nil {
		return respond(c)
	}
	for _, ev := range events {
		if obj, ok := ev.CanonicalObject(); ok {
			return Response{StatusCode: http.StatusCreated, Body: obj}, nil
		}
	}
	// Every create writes charge.created; should that change, encode.
	body, err := json.Marshal(c.Public(s.cfg.Links))
	if err != nil {
		return Response{}, fmt.Errorf("encode the charge: %w", err)
	}
	return Response{StatusCode: http.StatusCreated, Body: body}, nil
}

// logCreated writes the "charge created" line. It builds the record
// itself: Logger.InfoContext would box each value and walk the stack for
// a source position, for every create (issue 17; httpapi's access log
// does the same).
func logCreated(ctx context.Context, log *slog.Logger, id string, amount int64, mode domain.Mode) {
	h := log.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	rec := slog.NewRecord(time.Now(), slog.LevelInfo, "charge created", 0)
	rec.AddAttrs(slog.String("charge", domain.PrefixCharge+id), slog.Int64("amount", amount), slog.String("mode", string(mode)))
	_ = h.Handle(ctx, rec) // as Logger.Log: a handler's error is its own to report
}

// payerDocument is the document the fraud guard counts: the payer lock,
// or else the customer's document.
func payerDocument(c *domain.Charge) string {
	if p := c.ExpectedPayer(); p != "" {
		return p
	}
	return c.Customer().Document
}
