package httpapi

import (
	"encoding/base64"
	"strings"
	"time"

	"github.com/quitapix/quita/domain"
)

// txCreated is the create response of the payments surface.
type txCreated struct {
	ID               string           `json:"id"`
	Status           domain.TxStatus  `json:"status"`
	Amount           int64            `json:"amount"`
	Currency         domain.Currency  `json:"currency"`
	PaymentMethods   []domain.Method  `json:"paymentMethods"`
	CustomerName     *string          `json:"customerName"`
	CustomerDocument *string          `json:"customerDocument"`
	CustomerEmail    *string          `json:"customerEmail"`
	Metadata         map[string]any   `json:"metadata"`
	CreatedAt        domain.Timestamp `json:"createdAt"`
}

// txRead is the read format of a transaction.
type txRead struct {
	ID              string            `json:"id"`
	Status          domain.TxStatus   `json:"status"`
	Amount          int64             `json:"amount"`
	Currency        domain.Currency   `json:"currency"`
	PaymentMethods  []domain.Method   `json:"paymentMethods"`
	PaidWith        *domain.Method    `json:"paidWith"`
	PixQRCode       *string           `json:"pixQrCode"`
	PixCopyPaste    *string           `json:"pixCopyPaste"`
	PixExpiresAt    *domain.Timestamp `json:"pixExpiresAt"`
	CardRedirectURL *string           `json:"cardRedirectUrl"`
	MBEntity        *string           `json:"mbEntity"`
	MBReference     *string           `json:"mbReference"`
	MBExpiresAt     *domain.Timestamp `json:"mbExpiresAt"`
	BoletoBarcode   *string           `json:"boletoBarcode"`
	BoletoLine      *string           `json:"boletoLine"`
	BoletoPDFURL    *string           `json:"boletoPdfUrl"`
	BoletoExpiresAt *domain.Timestamp `json:"boletoExpiresAt"`
	CryptoAddress   *string           `json:"cryptoAddress"`
	CryptoNetwork   *string           `json:"cryptoNetwork"`
	CryptoCurrency  *string           `json:"cryptoCurrency"`
	CryptoAmount    *string           `json:"cryptoAmount"`
	ProviderFee     int64             `json:"providerFee"`
	PlatformFee     int64             `json:"platformFee"`
	NetAmount       int64             `json:"netAmount"`
	Metadata        map[string]any    `json:"metadata"`
	CreatedAt       domain.Timestamp  `json:"createdAt"`
	PaidAt          *domain.Timestamp `json:"paidAt"`
	// Splits and FeePayer: a split payment's (docs/marketplaces.md);
	// absent for any other.
	Splits   []txSplit        `json:"splits,omitempty"`
	FeePayer *domain.FeePayer `json:"feePayer,omitempty"`
}

// txSplit is one split in the read format: the charges surface's split
// with the payments format's upper-case status (PENDING, PAID,
// CANCELLED).
type txSplit struct {
	Account        string  `json:"account"`
	Amount         *int64  `json:"amount"`
	Percent        *string `json:"percent,omitempty"`
	Status         string  `json:"status"`
	AmountReversed int64   `json:"amountReversed"`
}

// txSplits renders ch's splits onto out.
func txSplits(ch *domain.Charge, out *txRead) {
	splits, payer := ch.PublicSplits()
	if splits == nil {
		return
	}
	out.FeePayer = &payer
	out.Splits = make([]txSplit, len(splits))
	for i, s := range splits {
		out.Splits[i] = txSplit{Account: s.Account, Amount: s.Amount, Percent: s.Percent, Status: strings.ToUpper(s.Status),
			AmountReversed: s.AmountReversed}
	}
}

func optStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optTime(t time.Time) *domain.Timestamp {
	if t.IsZero() {
		return nil
	}
	ts := domain.Timestamp(t)
	return &ts
}

func txCreateBody(c *domain.Charge) txCreated {
	cu := c.Customer()
	meta := c.Metadata()
	return txCreated{ID: domain.PrefixTransaction + c.ID(), Status: c.Status(), Amount: c.Amount(), Currency: c.Currency(),
		PaymentMethods: c.Methods(), CustomerName: optStr(cu.Name), CustomerDocument: optStr(cu.Document),
		CustomerEmail: optStr(cu.Email), Metadata: meta, CreatedAt: domain.Timestamp(c.CreatedAt())}
}

// txBody renders the read format; withQR adds the data-URL PNG (single
// reads only: a list page would draw up to 100 QR codes).
func (c *PaymentsController) txBody(ch *domain.Charge, withQR bool) txRead {
	s := ch.Snapshot()
	d := s.Details
	// A paid due-date charge reads as the amount it was paid, so that
	// netAmount = amount − providerFee − platformFee holds.
	amount := ch.PaidAmount()
	out := txRead{ID: domain.PrefixTransaction + s.ID, Status: s.Status, Amount: amount, Currency: s.Currency,
		PaymentMethods: s.Methods, CardRedirectURL: optStr(d.CardRedirectURL), MBEntity: optStr(d.MBEntity),
		MBReference: optStr(d.MBReference), MBExpiresAt: optTime(d.MBExpiresAt), BoletoBarcode: optStr(d.BoletoBarcode),
		BoletoLine: optStr(d.BoletoLine), BoletoPDFURL: optStr(d.BoletoPDFURL), BoletoExpiresAt: optTime(d.BoletoExpiresAt),
		CryptoAddress: optStr(d.CryptoAddress), CryptoNetwork: optStr(d.CryptoNetwork), CryptoCurrency: optStr(d.CryptoCurrency),
		CryptoAmount: optStr(d.CryptoAmount), ProviderFee: s.Fees.Provider, PlatformFee: s.Fees.Platform,
		NetAmount: s.Fees.Net(amount), Metadata: s.Metadata, CreatedAt: domain.Timestamp(s.CreatedAt)}
	if out.Metadata == nil {
		out.Metadata = map[string]any{}
	}
	if s.Pix != nil {
		out.PixCopyPaste = optStr(s.Pix.BRCode)
		out.PixExpiresAt = optTime(s.ExpiresAt)
		if withQR && c.qr != nil {
			if png, err := c.qr.PNG(s.Pix.BRCode); err == nil {
				u := "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
				out.PixQRCode = &u
			}
		}
	}
	if st := s.Settlement; st != nil && ch.Credited() {
		m := st.PaidWith
		out.PaidWith = &m
		out.PaidAt = optTime(st.PaidAt)
	}
	txSplits(ch, &out)
	return out
}

func optTimePtr(t *time.Time) *domain.Timestamp {
	if t == nil {
		return nil
	}
	return optTime(*t)
}
