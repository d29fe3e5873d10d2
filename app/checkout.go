package app

import (
	"context"
	"time"

	"github.com/quitapix/quita/domain"
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
	// TestMode marks a charge made with a test key: no real money moves.
	TestMode bool
	// Now is the server's clock when the view was read, so the page can
	// count down against server time rather than the payer's clock.
	Now time.Time
}

// CheckoutPix is the Pix panel: the copy-and-paste code and the public QR.
type CheckoutPix struct {
	BRCode    string
	QRCodeURL string
}

// CheckoutStatus is everything the public status endpoint reveals.
type CheckoutStatus struct {
	Status    domain.Status
	ExpiresAt time.Time
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
	if pub.Pix != nil {
		v.Pix = &CheckoutPix{BRCode: pub.Pix.BRCode, QRCodeURL: pub.Pix.QRCodeURL}
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
	return CheckoutStatus{Status: c.Status().Public(), ExpiresAt: c.ExpiresAt()}, nil
}
