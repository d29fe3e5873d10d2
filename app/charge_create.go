package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/quitapix/quita/app/exactlyonce"
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
	// Due makes a due-date charge (domain.NewChargeParams.Due).
	Due *domain.DueTermsParams
	// Splits share the charge among the caller's live sub-accounts, with
	// FeePayer ("" is platform); checked by checkSplits.
	Splits   []domain.Split
	FeePayer domain.FeePayer
	// openedInBatch: the cob was opened by the batch's request to the
	// acquirer (ports.CreatePixChargeRequest.OpenedInBatch).
	openedInBatch bool
}

// Idempotency identifies a financial write: the merchant's key and the
// fingerprint of the request (method, path and canonical body).
type Idempotency = exactlyonce.Request

// Response is what a financial write answered, replayed verbatim on retry.
type Response = exactlyonce.Response

// Respond is how the calling surface answers a resource a financial write
// created: its status and body in that surface's wire format. App records
// the answer with the resource, in the same transaction, so that a retry
// with the same key gets it byte for byte (docs/decisions.md, "Who renders
// an idempotent answer").
type Respond[T any] func(T) (Response, error)

// AnswerPublic is the charges surface's answer to a create: 201 with the
// charge's public object (domain.Charge.Public over ChargesConfig.Links),
// the bytes its charge.created event carries as data.object, taken from
// that event rather than encoded a second time. It is the nil Respond:
// ChargeService.Create answers it itself.
var AnswerPublic Respond[*domain.Charge]

// Create opens a charge exactly once per idempotency key and answers it as
// respond renders it (AnswerPublic: the charge's public object). It reads
// validate → attempt → cob → commit: the runner (app/exactlyonce) claims
// the key or answers a retry, the charge is validated, a Pix charge's cob
// is asked for under the attempt's txid once its intent is kept, and the
// charge, its events and the attempt's idempotency record commit in one
// transaction.
func (s *ChargeService) Create(ctx context.Context, caller Caller, in CreateChargeInput, idem Idempotency, respond Respond[*domain.Charge]) (Response, error) {
	opts := exactlyonce.Options{LiveCob: slices.Contains(in.Methods, domain.MethodPix)}
	return s.once.Do(ctx, caller.Scope(), idem, opts, func(a *exactlyonce.Attempt) (Response, error) {
		return s.create(ctx, caller, in, a, respond)
	})
}

func (s *ChargeService) create(ctx context.Context, caller Caller, in CreateChargeInput, a *exactlyonce.Attempt, respond Respond[*domain.Charge]) (Response, error) {
	id, err := s.ids.NewID()
	if err != nil {
		return Response{}, err
	}
	now := s.clock.Now()
	c, err := s.newCharge(caller, in, id, now)
	if err != nil {
		return Response{}, err
	}
	if err := s.attachSplits(ctx, caller, c, in); err != nil {
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
	if err := s.guard.Check(ctx, caller, ChargeAttempt{Amount: c.Amount(), PayerDocument: payerDocument(c), Key: a.Key.Key}); err != nil {
		return Response{}, err
	}
	scope := a.Key.Scope
	provider := s.acquirer.nameFor(scope)
	if slices.Contains(c.Methods(), domain.MethodPix) {
		txid, err := a.BeforeCob(ctx)
		if err != nil {
			return Response{}, err
		}
		req := cobRequest(caller, c, in, txid)
		req.OpenedInBatch = in.openedInBatch
		cob, err := s.acquirer.CreatePixCharge(ctx, req)
		if err != nil {
			return Response{}, fmt.Errorf("create pix charge: %w", err)
		}
		pix := domain.PixDetails{BRCode: cob.BRCode, TxID: cob.TxID, Location: cob.Location, ExpiresAt: cob.ExpiresAt}
		if err := c.AttachPix(pix, provider, cob.ProviderRef, now); err != nil {
			return Response{}, err
		}
	}
	// Method data other than the cob is filled asynchronously
	// (FinalizeMethods): the create answers WAITING_PAYMENT at once.
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
	answer, answerEvent, err := s.answerCreate(c, events, respond)
	if err != nil {
		return Response{}, err
	}
	rec := a.Record(id, answer, now)
	rec.AnswerEvent = answerEvent
	if err := s.store.CreateCharge(ctx, c, events, rec); err != nil {
		return Response{}, err
	}
	if c.MethodsPending() {
		s.finalizeInBackground(scope, id)
	}
	logCreated(ctx, s.log, id, c.Amount(), caller.Mode)
	return Response{StatusCode: rec.StatusCode, Body: rec.Body}, nil
}

// newCharge validates in as charge id of caller created at now, and
// refuses a due-date charge the acquirer of caller's mode cannot open.
func (s *ChargeService) newCharge(caller Caller, in CreateChargeInput, id string, now time.Time) (*domain.Charge, error) {
	c, err := domain.NewCharge(domain.NewChargeParams{
		ID: id, AccountID: caller.Account.ID, Mode: caller.Mode,
		Amount: in.Amount, Currency: in.Currency, Methods: in.Methods,
		Description: in.Description, ExpiresIn: in.ExpiresIn, DefaultExpiry: caller.Account.DefaultExpiry,
		Customer: in.Customer, StrictDocument: in.StrictDocument, CustomerRef: in.CustomerRef,
		ExpectedPayer: in.ExpectedPayer, Metadata: in.Metadata, WebhookURL: in.WebhookURL, Due: in.Due, Now: now,
	})
	if err != nil {
		return nil, err
	}
	if _, due := c.DueTerms(); due && !s.acquirer.supportsDueDate(caller.Scope()) {
		return nil, ErrDueDateNotSupported
	}
	return c, nil
}

// cobRequest asks the acquirer for c's cob under txid.
func cobRequest(caller Caller, c *domain.Charge, in CreateChargeInput, txid string) ports.CreatePixChargeRequest {
	req := ports.CreatePixChargeRequest{
		Scope: caller.Scope(), ChargeID: c.ID(), TxID: txid, Amount: c.Amount(), ExpiresAt: c.ExpiresAt(),
		Description: in.Description, PayerTaxID: c.ExpectedPayer(), PayerName: in.Customer.Name,
		MerchantName: caller.Account.MerchantName, MerchantCity: caller.Account.MerchantCity,
	}
	if terms, due := c.DueTerms(); due {
		req.Due, req.DebtorTaxID, req.DebtorName = &terms, c.Customer().Document, c.Customer().Name
	}
	return req
}

// answerCreate is a create's answer by respond, and the id of the event
// that carries it when it is taken from one: for AnswerPublic (nil), the
// data.object of its canonical event, the charge's public object encoded
// once for both.
func (s *ChargeService) answerCreate(c *domain.Charge, events []domain.Event, respond Respond[*domain.Charge]) (Response, string, error) {
	if respond != nil {
		resp, err := respond(c)
		return resp, "", err
	}
	for _, ev := range events {
		if obj, ok := ev.CanonicalObject(); ok {
			return Response{StatusCode: http.StatusCreated, Body: obj}, ev.ID, nil
		}
	}
	// Every create writes charge.created; should that change, encode.
	body, err := json.Marshal(c.Public(s.cfg.Links))
	if err != nil {
		return Response{}, "", fmt.Errorf("encode the charge: %w", err)
	}
	return Response{StatusCode: http.StatusCreated, Body: body}, "", nil
}

// logCreated writes the "charge created" line. It builds the record
// itself: Logger.InfoContext would box each value and walk the stack for
// a source position, for every create (httpapi's access log does the
// same).
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
