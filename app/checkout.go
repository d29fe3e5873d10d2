package app

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/ports"
)

// CheckoutService reads what the hosted checkout page shows a payer. The
// page is public (the unguessable raw id is the only credential), so its
// view is an allowlist: nothing here may be private to the merchant or to
// the payer.
type CheckoutService struct {
	charges  *ChargeService
	accounts ports.AccountStore
	links    domain.Links
	clock    ports.Clock
}

// NewCheckoutService wires a checkout service.
func NewCheckoutService(charges *ChargeService, accounts ports.AccountStore, clock ports.Clock, cfg ChargesConfig) *CheckoutService {
	return &CheckoutService{charges: charges, accounts: accounts, links: cfg.Links, clock: clock}
}

// CheckoutView is the allowlist of a charge shown to its payer: no internal
// or prefixed ids, fees, provider, payer-lock document, customer data or
// metadata other than the description.
type CheckoutView struct {
	// RawID is the id already in the page's address.
	RawID string
	// MerchantName is the account's display name.
	MerchantName string
	Amount       int64
	Currency     domain.Currency
	Status       domain.Status
	// Description is metadata.description, "" when the merchant sent none.
	Description string
	ExpiresAt   time.Time
	Methods     []domain.Method
	// Pix is nil when the charge has no Pix data (acquirer failure, or a
	// method other than Pix).
	Pix *CheckoutPix
	// MethodsPending: the acquirer is still producing the data of the
	// methods other than Pix (boleto, Multibanco, card, crypto).
	MethodsPending bool
	// Boleto, Multibanco, Card and Crypto are nil when the charge does not
	// offer the method or its data is not there yet.
	Boleto     *CheckoutBoleto
	Multibanco *CheckoutMultibanco
	Card       *CheckoutCard
	Crypto     *CheckoutCrypto
	// MBWayPhoneEnding is the last digits of the MB WAY phone (never the
	// whole number); "" when the charge does not offer MB WAY.
	MBWayPhoneEnding string
	// TestMode marks a charge made with a test key: no real money moves.
	TestMode bool
	// Due is a due-date charge's due date and what it asks today
	// (Brasília); nil for an immediate charge. Today is nil once the last
	// payable day has passed.
	Due *CheckoutDue
	// Now is the server's clock when the view was read, so the page can
	// count down against server time rather than the payer's clock.
	Now time.Time
}

// CheckoutDue is what the page shows of a due-date charge.
type CheckoutDue struct {
	Date  bizdays.Date
	Today *domain.DueBreakdown
}

// CheckoutPix is the Pix panel: the copy-and-paste code and the public QR.
type CheckoutPix struct {
	BRCode    string
	QRCodeURL string
}

// CheckoutBoleto is the boleto panel.
type CheckoutBoleto struct {
	// Line is the 47-digit digitable line, Barcode the 44-digit barcode.
	Line      string
	Barcode   string
	PDFURL    string
	ExpiresAt time.Time
}

// CheckoutMultibanco is the Multibanco panel.
type CheckoutMultibanco struct {
	Entity    string
	Reference string
	ExpiresAt time.Time
}

// CheckoutCard is the card panel: where the payer enters the card.
type CheckoutCard struct {
	RedirectURL string
}

// CheckoutCrypto is the crypto panel.
type CheckoutCrypto struct {
	Address  string
	Network  string
	Currency string
	// Amount is the exact decimal string to send (no float).
	Amount string
}

// mbWayDigits is how many trailing digits of the MB WAY phone the page
// shows.
const mbWayDigits = 3

// CheckoutStatus is everything the public status endpoint reveals.
type CheckoutStatus struct {
	Status    domain.Status
	ExpiresAt time.Time
	// MethodsReady: the data of every method is there (false while the
	// acquirer is still producing it).
	MethodsReady bool
}

// View reads the charge with raw id rawID for its checkout page, expiring
// it first when it is due. ports.ErrNotFound for an unknown id.
func (s *CheckoutService) View(ctx context.Context, rawID string) (CheckoutView, error) {
	c, err := s.charges.GetPublic(ctx, rawID)
	if err != nil {
		return CheckoutView{}, err
	}
	acct, err := s.accounts.GetAccount(ctx, c.AccountID())
	if err != nil {
		return CheckoutView{}, err
	}
	name := acct.Name
	if name == "" {
		name = acct.MerchantName
	}
	pub := c.Public(s.links)
	v := CheckoutView{
		RawID:        c.ID(),
		MerchantName: name,
		Amount:       c.Amount(),
		Currency:     c.Currency(),
		Status:       pub.Status,
		ExpiresAt:    c.ExpiresAt(),
		Methods:      c.Methods(),
		TestMode:     c.Mode() == domain.ModeTest,
		Now:          s.clock.Now(),
	}
	if d, ok := pub.Metadata["description"].(string); ok {
		v.Description = d
	}
	if terms, due := c.DueTerms(); due {
		v.Due = &CheckoutDue{Date: terms.Due()}
		if b, err := terms.AmountDue(domain.BrasiliaDate(v.Now)); err == nil {
			v.Due.Today = &b
		}
	}
	if pub.Pix != nil && pub.Pix.BRCode != "" { // a subscription cycle's charge is debited: nothing to scan
		v.Pix = &CheckoutPix{BRCode: pub.Pix.BRCode, QRCodeURL: pub.Pix.QRCodeURL}
	}
	v.MethodsPending = c.MethodsPending()
	d := c.Details()
	for _, m := range v.Methods {
		switch m {
		case domain.MethodBoleto:
			if d.BoletoLine != "" {
				v.Boleto = &CheckoutBoleto{Line: d.BoletoLine, Barcode: d.BoletoBarcode, PDFURL: d.BoletoPDFURL, ExpiresAt: d.BoletoExpiresAt}
			}
		case domain.MethodMultibanco:
			if d.MBReference != "" {
				v.Multibanco = &CheckoutMultibanco{Entity: d.MBEntity, Reference: d.MBReference, ExpiresAt: d.MBExpiresAt}
			}
		case domain.MethodCreditCard:
			if d.CardRedirectURL != "" {
				v.Card = &CheckoutCard{RedirectURL: d.CardRedirectURL}
			}
		case domain.MethodCrypto:
			if d.CryptoAddress != "" {
				v.Crypto = &CheckoutCrypto{Address: d.CryptoAddress, Network: d.CryptoNetwork, Currency: d.CryptoCurrency, Amount: d.CryptoAmount}
			}
		case domain.MethodMBWay:
			phone, _ := domain.MetadataString(c.Metadata()["phone"])
			v.MBWayPhoneEnding = lastDigits(phone, mbWayDigits)
		}
	}
	return v, nil
}

// Status reads only the public status and expiry of a charge, for the
// page's live updates. ports.ErrNotFound for an unknown id.
func (s *CheckoutService) Status(ctx context.Context, rawID string) (CheckoutStatus, error) {
	c, err := s.charges.GetPublic(ctx, rawID)
	if err != nil {
		return CheckoutStatus{}, err
	}
	return CheckoutStatus{Status: c.Status().Public(), ExpiresAt: c.ExpiresAt(), MethodsReady: !c.MethodsPending()}, nil
}

// ErrCardScreenUnavailable: the sandbox card screen serves only open
// test-mode charges that offer CREDIT_CARD, until their expires_at.
var ErrCardScreenUnavailable = errors.New("the sandbox card screen is not available for this charge")

// CardDecision is the payer's answer on the sandbox card screen: approve
// settles the charge as APPROVED with CREDIT_CARD (fees, ledger and events
// as the test helper's transition), decline refuses it (REFUSED). Test
// mode only: a live charge answers ports.ErrNotFound, as if the screen
// did not exist.
func (s *CheckoutService) CardDecision(ctx context.Context, rawID string, approve bool) (CheckoutStatus, error) {
	c, err := s.charges.GetPublic(ctx, rawID)
	if err != nil {
		return CheckoutStatus{}, err
	}
	if c.Mode() != domain.ModeTest {
		return CheckoutStatus{}, ports.ErrNotFound
	}
	if !slices.Contains(c.Methods(), domain.MethodCreditCard) || !c.PayableAt(s.clock.Now()) {
		return CheckoutStatus{}, ErrCardScreenUnavailable
	}
	scope := ports.Scope{AccountID: c.AccountID(), Mode: c.Mode()}
	fees, err := s.charges.feesFor(ctx, c.AccountID())
	if err != nil {
		return CheckoutStatus{}, err
	}
	to, method := domain.TxRefused, domain.Method("")
	if approve {
		to, method = domain.TxApproved, domain.MethodCreditCard
	}
	out, err := s.charges.update(ctx, scope, c.ID(), func(c *domain.Charge) error {
		now := s.clock.Now()
		if !c.PayableAt(now) {
			return ErrCardScreenUnavailable
		}
		return c.Transition(to, method, fees, "", now)
	})
	if err != nil {
		return CheckoutStatus{}, err
	}
	return CheckoutStatus{Status: out.Status().Public(), ExpiresAt: out.ExpiresAt(), MethodsReady: !out.MethodsPending()}, nil
}

// CardScreen reports whether the sandbox card screen serves rawID: a
// test-mode charge that offers CREDIT_CARD. ports.ErrNotFound otherwise.
func (s *CheckoutService) CardScreen(ctx context.Context, rawID string) (CheckoutView, error) {
	v, err := s.View(ctx, rawID)
	if err != nil {
		return CheckoutView{}, err
	}
	if !v.TestMode || !slices.Contains(v.Methods, domain.MethodCreditCard) {
		return CheckoutView{}, ports.ErrNotFound
	}
	return v, nil
}

// lastDigits returns the last n digits of s ("" when s has fewer).
func lastDigits(s string, n int) string {
	var ds []byte
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			ds = append(ds, s[i])
		}
	}
	if len(ds) < n {
		return ""
	}
	return string(ds[len(ds)-n:])
}
