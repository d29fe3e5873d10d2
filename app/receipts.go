package app

import (
	"context"
	"errors"
	"runtime"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// ErrReceiptUnavailable: no receipt exists yet — the payment was not
// credited to the merchant (unpaid, held for review, returned by the payer
// lock) or the refund is not confirmed.
var ErrReceiptUnavailable = errors.New("receipt unavailable")

// ErrReceiptsBusy: every drawing slot stayed taken for
// ReceiptsConfig.QueueWait; nothing was drawn. Retry shortly.
var ErrReceiptsBusy = errors.New("too many receipts being drawn")

// ReceiptsConfig says what receipts print about where merchants' money is,
// and how many are drawn at once.
type ReceiptsConfig struct {
	// Institution names the payment institution holding merchants' live
	// money, printed as the payee's institution (QUITA_RECEIPT_INSTITUTION).
	Institution string
	// MaxConcurrent bounds the receipts being drawn at once in this
	// process (default GOMAXPROCS): drawing one keeps a CPU busy and its
	// document in memory, so concurrent requests queue for a slot instead
	// of all drawing together.
	MaxConcurrent int
	// QueueWait is the longest a request waits for a slot (default 1 s),
	// and never past its context; then ErrReceiptsBusy.
	QueueWait time.Duration
}

// DefaultReceiptInstitution is the payee's institution when none is
// configured.
const DefaultReceiptInstitution = "Quita"

// sandboxInstitution holds test-mode money; the sandbox bank signs its
// end-to-end ids with sandbox ISPB 99999999.
const (
	sandboxInstitution = "Quita Sandbox"
	sandboxISPB        = "99999999"
)

// ReceiptService draws the receipts (comprovantes) of payments, refunds
// and payouts from Quita's own records, for the API and the dashboard
// alike: both call PaymentReceipt, RefundReceipt and PayoutReceipt with the
// caller whose data it is. Each draws in one of ReceiptsConfig's slots and
// may fail with ErrReceiptsBusy, or the context's error, waiting for one.
type ReceiptService struct {
	charges  *ChargeService
	store    ports.PaymentStore
	payouts  ports.PayoutStore
	renderer ports.ReceiptRenderer
	clock    ports.Clock
	cfg      ReceiptsConfig
	// slots holds one token per receipt being drawn: at most
	// cfg.MaxConcurrent renderer calls run at any moment.
	slots chan struct{}
}

// NewReceiptService wires the receipt service.
func NewReceiptService(charges *ChargeService, store ports.PaymentStore, payouts ports.PayoutStore, renderer ports.ReceiptRenderer,
	clock ports.Clock, cfg ReceiptsConfig,
) *ReceiptService {
	if cfg.Institution == "" {
		cfg.Institution = DefaultReceiptInstitution
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = runtime.GOMAXPROCS(0)
	}
	if cfg.QueueWait <= 0 {
		cfg.QueueWait = time.Second
	}
	return &ReceiptService{charges: charges, store: store, payouts: payouts, renderer: renderer, clock: clock, cfg: cfg,
		slots: make(chan struct{}, cfg.MaxConcurrent)}
}

// Document is a drawn receipt, ready to send.
type Document struct {
	ContentType string
	// Filename suggests a name for a download ("comprovante-tx_….pdf").
	Filename string
	Body     []byte
}

// PaymentReceipt draws the receipt of a payment credited to the caller's
// account, in loc. ports.ErrNotFound for a charge of another account or
// mode; ErrReceiptUnavailable while it was not credited.
func (s *ReceiptService) PaymentReceipt(ctx context.Context, caller Caller, chargeID string, loc domain.Locale) (Document, error) {
	c, err := s.charges.Get(ctx, caller, chargeID)
	if err != nil {
		return Document{}, err
	}
	st := c.Settlement()
	if st == nil || !c.Credited() {
		return Document{}, ErrReceiptUnavailable
	}
	r := s.base(c, loc)
	r.Kind = ports.ReceiptPayment
	r.Amount, r.At, r.Method = c.PaidAmount(), st.PaidAt, st.PaidWith
	r.To, r.From = s.merchant(caller), payer(c, st)
	r.EndToEndID = st.EndToEndID
	if b, ok := c.PaidBreakdown(); ok {
		terms, _ := c.DueTerms()
		r.Due, r.DueDate = &b, terms.Params().Due.String()
	}
	if d, ok := c.Metadata()["description"].(string); ok {
		r.Description = d
	}
	return s.render(ctx, r, "comprovante-"+r.TransactionID, "receipt-"+r.TransactionID)
}

// RefundReceipt draws the receipt of a confirmed refund (REFUNDED) of one
// of the caller's payments, naming who received the money: the payer for
// a devolution or a cashout to the payer's document, the masked key for a
// cashout to a key the merchant chose. ports.ErrNotFound when the refund is not of
// that payment; ErrReceiptUnavailable while it is open, or when it failed.
func (s *ReceiptService) RefundReceipt(ctx context.Context, caller Caller, chargeID, refundID string, loc domain.Locale) (Document, error) {
	c, err := s.charges.Get(ctx, caller, chargeID)
	if err != nil {
		return Document{}, err
	}
	rf, err := s.store.FindRefund(ctx, caller.Scope(), refundID)
	if err != nil {
		return Document{}, err
	}
	if rf.ChargeID != c.ID() {
		return Document{}, ports.ErrNotFound
	}
	st := c.Settlement()
	if rf.Status != domain.RefundRefunded || st == nil {
		return Document{}, ErrReceiptUnavailable
	}
	r := s.base(c, loc)
	r.Kind = ports.ReceiptRefund
	r.Amount, r.Currency, r.Fee, r.At, r.Method = rf.Amount, rf.Currency, rf.Fee, rf.UpdatedAt, st.PaidWith
	r.RefundStrategy = rf.Strategy
	r.From, r.To = s.merchant(caller), refundReceiver(c, st, rf)
	r.ReferenceID = domain.PrefixRefund + rf.ID
	r.OriginalEndToEndID = st.EndToEndID
	r.Description = rf.Reason
	return s.render(ctx, r, "comprovante-devolucao-"+r.ReferenceID, "refund-receipt-"+r.ReferenceID)
}

// PayoutReceipt draws the receipt of a paid payout of the caller's
// account (comprovante de transferência): the merchant's balance sent by
// Pix to a key, which is shown masked, with the payout's fee apart.
// ports.ErrNotFound for another account's or mode's payout;
// ErrReceiptUnavailable until it is paid.
func (s *ReceiptService) PayoutReceipt(ctx context.Context, caller Caller, payoutID string, loc domain.Locale) (Document, error) {
	p, err := s.payouts.GetPayout(ctx, caller.Scope(), payoutID)
	if err != nil {
		return Document{}, err
	}
	ps := p.Snapshot()
	if ps.Status != domain.PayoutPaid {
		return Document{}, ErrReceiptUnavailable
	}
	r := ports.Receipt{
		Kind: ports.ReceiptPayout, Locale: loc, Mode: ps.Mode, Amount: ps.Amount, Currency: ps.Currency, Fee: ps.Fee,
		At: ps.PaidAt, IssuedAt: s.clock.Now(), Method: domain.MethodPix,
		From: s.merchant(caller), To: ports.ReceiptParty{PixKey: ps.Key.Masked()},
		Description: ps.Description, ReferenceID: domain.PrefixPayout + ps.ID, EndToEndID: ps.EndToEndID,
	}
	return s.render(ctx, r, "comprovante-transferencia-"+r.ReferenceID, "payout-receipt-"+r.ReferenceID)
}

// base fills what every receipt of charge c shows.
func (s *ReceiptService) base(c *domain.Charge, loc domain.Locale) ports.Receipt {
	r := ports.Receipt{
		Locale: loc, Mode: c.Mode(), Currency: c.Currency(), IssuedAt: s.clock.Now(),
		TransactionID: domain.PrefixTransaction + c.ID(),
	}
	if p := c.Pix(); p != nil {
		r.TxID = p.TxID
	}
	return r
}

func (s *ReceiptService) render(ctx context.Context, r ports.Receipt, ptName, enName string) (Document, error) {
	release, err := s.slot(ctx)
	if err != nil {
		return Document{}, err
	}
	pdf, err := s.renderer.RenderPDF(r)
	release()
	if err != nil {
		return Document{}, err
	}
	name := ptName
	if r.Locale == domain.LocaleEN {
		name = enName
	}
	return Document{ContentType: "application/pdf", Filename: name + ".pdf", Body: pdf}, nil
}

// slot waits for one of the MaxConcurrent drawing slots, at most
// QueueWait and never past ctx; the returned func gives it back.
func (s *ReceiptService) slot(ctx context.Context) (func(), error) {
	release := func() { <-s.slots }
	select {
	case s.slots <- struct{}{}:
		return release, nil
	default:
	}
	t := time.NewTimer(s.cfg.QueueWait)
	defer t.Stop()
	select {
	case s.slots <- struct{}{}:
		return release, nil
	case <-t.C:
		return nil, ErrReceiptsBusy
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// merchant is the caller's account as a receipt party.
func (s *ReceiptService) merchant(caller Caller) ports.ReceiptParty {
	a := caller.Account
	name := a.MerchantName
	if name == "" {
		name = a.Name
	}
	doc, kind := domain.MaskTaxID(a.Document)
	inst := s.cfg.Institution
	if caller.Mode == domain.ModeTest {
		inst = sandboxInstitution
	}
	return ports.ReceiptParty{Name: name, MaskedDocument: doc, DocumentKind: kind, Institution: inst}
}

// refundReceiver is who received a refund's money, as a receipt may
// attest it. A devolution goes back to the account that paid (the payer
// and their bank, from the payment). A cashout to a key the merchant
// chose names that key, masked, and nobody else: Quita does not know its
// owner, and the payer must not be named for money sent elsewhere. A
// cashout without a key went to the payer's document as a Pix key: the
// payer, but at whatever institution holds that key.
func refundReceiver(c *domain.Charge, st *domain.Settlement, rf *domain.Refund) ports.ReceiptParty {
	if d, ok := rf.Destination(); ok {
		return ports.ReceiptParty{PixKey: d.Key}
	}
	p := payer(c, st)
	if rf.Strategy == domain.StrategyCashout {
		p.Institution = ""
		if k, err := domain.ParsePixKey(st.PayerTaxID, ""); err == nil {
			p.PixKey = k.Masked()
		}
	}
	return p
}

// payer is who paid, as the bank reported it: a receipt attests the
// payment, so the customer the merchant declared is not put in the
// payer's place. The institution is read from the end-to-end id, which
// carries the ISPB of the payer's bank.
func payer(c *domain.Charge, st *domain.Settlement) ports.ReceiptParty {
	doc, kind := domain.MaskTaxID(st.PayerTaxID)
	p := ports.ReceiptParty{Name: st.PayerName, MaskedDocument: doc, DocumentKind: kind}
	if ispb, ok := domain.EndToEndISPB(st.EndToEndID); ok {
		p.Institution = "ISPB " + ispb
		if c.Mode() == domain.ModeTest && ispb == sandboxISPB {
			p.Institution = sandboxInstitution + " (ISPB " + ispb + ")"
		}
	}
	return p
}
