package domain

import (
	"time"
)

// AttachPix records the acquirer's answer to the create call and opens the
// charge for payment (PENDING → WAITING_PAYMENT).
func (c *Charge) AttachPix(p PixDetails, provider, providerRef string, now time.Time) error {
	if c.s.Pix != nil {
		return ErrPixAlreadyAttached
	}
	if c.s.Status != TxPending {
		return ErrInvalidTransition
	}
	if p.ExpiresAt.IsZero() {
		p.ExpiresAt = c.s.ExpiresAt
	}
	c.s.ExpiresAt = p.ExpiresAt
	c.s.Pix = &p
	c.s.Provider = provider
	c.s.ProviderRef = providerRef
	return c.setStatus(TxWaitingPayment, now)
}

// Refuse marks a charge the acquirer would not create (PENDING → REFUSED).
func (c *Charge) Refuse(now time.Time) error {
	if c.s.Status != TxPending {
		return ErrInvalidTransition
	}
	return c.setStatus(TxRefused, now)
}

// MethodDetails is what the acquirer produced for the payment methods of a
// charge other than the Pix cob (PixDetails). Zero fields do not apply.
type MethodDetails struct {
	CardRedirectURL string
	MBEntity        string
	MBReference     string
	MBExpiresAt     time.Time
	BoletoBarcode   string
	BoletoLine      string
	BoletoPDFURL    string
	BoletoExpiresAt time.Time
	CryptoAddress   string
	CryptoNetwork   string
	CryptoCurrency  string
	// CryptoAmount is a decimal string: no float carries a crypto amount.
	CryptoAmount string
}

// NeedsMethodData reports whether the charge offers a method whose data
// the acquirer must produce (all but PIX, which has its cob, and MBWAY,
// which pushes to the payer's phone).
func (c *Charge) NeedsMethodData() bool {
	for _, m := range c.s.Methods {
		if m != MethodPix && m != MethodMBWay {
			return true
		}
	}
	return false
}

// AwaitMethods opens a charge being created (PENDING → WAITING_PAYMENT)
// whose method data the acquirer will produce later (AttachMethods).
func (c *Charge) AwaitMethods(provider string, now time.Time) error {
	c.s.MethodsPending = true
	if c.s.Provider == "" {
		c.s.Provider = provider
	}
	if c.s.Status == TxPending {
		return c.setStatus(TxWaitingPayment, now)
	}
	return nil
}

// AttachMethods records the acquirer's data for the non-Pix methods and
// opens a charge still being created (PENDING → WAITING_PAYMENT).
func (c *Charge) AttachMethods(d MethodDetails, provider, providerRef string, now time.Time) error {
	c.s.Details = d
	c.s.MethodsPending = false
	if c.s.Provider == "" {
		c.s.Provider = provider
	}
	if c.s.ProviderRef == "" {
		c.s.ProviderRef = providerRef
	}
	if c.s.Status == TxPending {
		return c.setStatus(TxWaitingPayment, now)
	}
	c.s.UpdatedAt = now.UTC()
	return nil
}
