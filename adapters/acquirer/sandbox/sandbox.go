// Package sandbox is Quita's in-process acquirer. It behaves like a PSP
// bank that always answers: it issues dynamic BR Codes whose location URL
// points at the configured checkout host, accepts cancellations and Pix
// returns, sends Pix out (payouts and cashout refunds), and plays the
// payer's bank for the test helpers. It keeps no state that a second
// quitad process would need, so test mode works the same behind a load
// balancer.
package sandbox

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/brcode"
	"github.com/quitapix/quita/ports"
)

// Name is the provider name kept on sandbox charges.
const Name = "sandbox"

// ISPB is the participant code the sandbox bank signs end-to-end ids with.
// 99999999 is not assigned to any real participant.
const ISPB = "99999999"

// Config configures the sandbox.
type Config struct {
	// LocationHost is host[:port][/path] of the payload locations, without
	// scheme (the BR Code carries the location without one).
	LocationHost string
	// CheckoutBase is {checkout_url_base} with its scheme; sandbox card
	// payments are approved on the hosted checkout's card screen under it.
	CheckoutBase string
	// MaxReturns bounds the returns kept for Returns, and the Pix sends
	// kept for Sends (default DefaultMaxReturns each); the oldest go first.
	// Nothing depends on them: a return's or a send's idempotency lives in
	// the database and in its id.
	MaxReturns int
	// Latency is how long each call waits before it answers, as if it
	// were a round trip to a PSP over the network (real ones take 50-300
	// ms), so load tests see a worker bounded by its acquirer's waits,
	// not by CPU. It applies to every call a PSP would answer (cobs,
	// method data, refunds, Pix returns and sends, status reads), never to
	// the test helpers that play the payer's bank. A context that ends
	// first ends the wait with its error. Zero: no wait.
	Latency time.Duration
}

// DefaultMaxReturns is Config.MaxReturns when unset.
const DefaultMaxReturns = 10_000

// Acquirer is the sandbox acquirer.
type Acquirer struct {
	cfg  Config
	rnd  io.Reader
	now  func() time.Time
	down atomic.Bool

	mu      sync.Mutex
	returns kept[ports.ReturnPixRequest] // by return id
	sends   kept[ports.PixSendRequest]   // by send id
}

var (
	_ ports.Acquirer         = (*Acquirer)(nil)
	_ ports.PaymentSimulator = (*Acquirer)(nil)
)

// New returns a sandbox acquirer.
func New(cfg Config, clock ports.Clock) *Acquirer {
	if cfg.MaxReturns <= 0 {
		cfg.MaxReturns = DefaultMaxReturns
	}
	return &Acquirer{
		cfg:     cfg,
		rnd:     rand.Reader,
		now:     clock.Now,
		returns: newKept[ports.ReturnPixRequest](cfg.MaxReturns),
		sends:   newKept[ports.PixSendRequest](cfg.MaxReturns),
	}
}

// kept is a bounded record of requests by id, for tests: a repeated id is
// kept once (as first seen), and past max the oldest go first.
type kept[T any] struct {
	max   int
	byID  map[string]T
	order []string // ids, oldest first
}

func newKept[T any](max int) kept[T] { return kept[T]{max: max, byID: make(map[string]T)} }

// add keeps v under id unless id is kept already.
func (k *kept[T]) add(id string, v T) {
	if _, ok := k.byID[id]; ok {
		return
	}
	k.byID[id] = v
	k.order = append(k.order, id)
	if len(k.order) > k.max {
		delete(k.byID, k.order[0])
		k.order = k.order[1:] // append reallocates now and then, dropping the prefix
	}
}

// list returns what is kept, oldest first.
func (k *kept[T]) list() []T {
	out := make([]T, 0, len(k.order))
	for _, id := range k.order {
		out = append(out, k.byID[id])
	}
	return out
}

// LocationHostFromURL turns a checkout base URL into the location host of
// sandbox BR Codes ("https://pay.example.com/c" → "pay.example.com/c/pix").
func LocationHostFromURL(checkoutBase string) string {
	h := checkoutBase
	if i := strings.Index(h, "://"); i >= 0 {
		h = h[i+3:]
	}
	return strings.TrimRight(h, "/") + "/pix"
}

// SetDown makes every call fail with ports.ErrAcquirerUnavailable, as a PSP
// outage would; tests use it.
func (a *Acquirer) SetDown(down bool) { a.down.Store(down) }

// call is the start of every call a PSP would answer over the network:
// it waits out Config.Latency (or until ctx ends, with ctx's error), then
// fails while the sandbox is down.
func (a *Acquirer) call(ctx context.Context) error {
	if a.cfg.Latency > 0 {
		t := time.NewTimer(a.cfg.Latency)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	if a.down.Load() {
		return ports.ErrAcquirerUnavailable
	}
	return nil
}

// Name implements ports.Acquirer.
func (a *Acquirer) Name() string { return Name }

// SupportsDueDate implements ports.DueDateSupport: the sandbox's cob is
// the charge itself, and its payments are settled against the amount due
// on their day (the pay test helper's date).
func (a *Acquirer) SupportsDueDate(ports.Scope) bool { return true }

var _ ports.DueDateSupport = (*Acquirer)(nil)

// CreatePixCharge implements ports.Acquirer. The answer depends only on the
// request, so a retry with the same txid gets the same cob.
func (a *Acquirer) CreatePixCharge(ctx context.Context, req ports.CreatePixChargeRequest) (*ports.CreatePixChargeResponse, error) {
	if err := a.call(ctx); err != nil {
		return nil, err
	}
	if !domain.ValidTxID(req.TxID) {
		return nil, fmt.Errorf("%w: txid %q", ports.ErrAcquirerRejected, req.TxID)
	}
	location := a.cfg.LocationHost + "/" + req.TxID
	code, err := brcode.NewDynamic(location, req.MerchantName, req.MerchantCity)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ports.ErrAcquirerRejected, err)
	}
	return &ports.CreatePixChargeResponse{
		BRCode:      code,
		TxID:        req.TxID,
		Location:    location,
		ExpiresAt:   req.ExpiresAt,
		ProviderRef: req.TxID,
	}, nil
}

// CancelPixCharge implements ports.Acquirer.
func (a *Acquirer) CancelPixCharge(ctx context.Context, _ ports.CancelPixChargeRequest) error {
	return a.call(ctx)
}

// ReturnPix implements ports.Acquirer. A return id seen before answers
// as before.
func (a *Acquirer) ReturnPix(ctx context.Context, req ports.ReturnPixRequest) (*ports.ReturnPixResponse, error) {
	if err := a.call(ctx); err != nil {
		return nil, err
	}
	return a.returnPix(req)
}

// returnPix is ReturnPix past the round trip (a refund's return is part
// of the refund's call).
func (a *Acquirer) returnPix(req ports.ReturnPixRequest) (*ports.ReturnPixResponse, error) {
	if req.EndToEndID == "" || req.Amount <= 0 || req.ReturnID == "" {
		return nil, fmt.Errorf("%w: a return needs an end-to-end id, an amount and an id", ports.ErrAcquirerRejected)
	}
	a.mu.Lock()
	a.returns.add(req.ReturnID, req)
	a.mu.Unlock()
	// The sandbox's payer banks credit every return at once.
	return &ports.ReturnPixResponse{ProviderRef: req.ReturnID, Status: domain.PixReturnReturned}, nil
}

// ReturnPixStatus implements ports.Acquirer: every return the sandbox
// accepted was credited at once, and it keeps none a second process would
// need, so any well-formed return reads RETURNED.
func (a *Acquirer) ReturnPixStatus(ctx context.Context, req ports.ReturnPixStatusRequest) (*ports.ReturnPixResponse, error) {
	if err := a.call(ctx); err != nil {
		return nil, err
	}
	if req.EndToEndID == "" || req.ReturnID == "" {
		return nil, fmt.Errorf("%w: a return needs an end-to-end id and an id", ports.ErrNotFound)
	}
	return &ports.ReturnPixResponse{ProviderRef: req.ReturnID, Status: domain.PixReturnReturned}, nil
}

// Returns lists the latest returns the sandbox accepted (at most
// Config.MaxReturns), oldest first, for tests.
func (a *Acquirer) Returns() []ports.ReturnPixRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.returns.list()
}

// SimulatePixPayment implements ports.PaymentSimulator: the payer's bank
// sends a Pix for the cob and the sandbox reports it as a PSP would.
func (a *Acquirer) SimulatePixPayment(_ context.Context, req ports.SimulatePaymentRequest) (domain.PixPayment, error) {
	if a.down.Load() {
		return domain.PixPayment{}, ports.ErrAcquirerUnavailable
	}
	now := a.now().UTC()
	if !req.PaidAt.IsZero() {
		now = req.PaidAt.UTC()
	}
	e2e, err := domain.NewEndToEndID(ISPB, now, a.rnd)
	if err != nil {
		return domain.PixPayment{}, err
	}
	name := req.PayerName
	if name == "" {
		name = payerNames[int(e2e[len(e2e)-1])%len(payerNames)]
	}
	return domain.PixPayment{
		EndToEndID: e2e,
		Amount:     req.Amount,
		PayerTaxID: req.PayerTaxID,
		PayerName:  name,
		PaidAt:     now,
	}, nil
}

// payerNames are the payers the sandbox names when a test payment names
// none, as a PSP always reports the payer's name: picked by the payment's
// end-to-end id, so a payment keeps its payer.
var payerNames = []string{
	"Maria da Silva", "João Pereira Santos", "Ana Beatriz Oliveira", "Carlos Eduardo Souza",
	"Juliana Costa Lima", "Rafael Almeida", "Fernanda Rodrigues", "Lucas Gomes Ribeiro",
}
