package ports

//go:generate go tool moq -rm -out ../mocks/receipts.go -pkg mocks . ReceiptRenderer

import (
	"time"

	"github.com/quitapix/quita/domain"
)

// ReceiptKind says which movement of money a receipt attests.
type ReceiptKind string

// The receipts Quita issues.
const (
	// ReceiptPayment: a payer paid the merchant (comprovante de pagamento).
	ReceiptPayment ReceiptKind = "payment"
	// ReceiptRefund: the merchant returned a payment's money, to the
	// payer or to the key a cashout named (comprovante de devolução).
	ReceiptRefund ReceiptKind = "refund"
	// ReceiptPayout: the merchant's balance was paid out to its bank
	// account (comprovante de transferência).
	ReceiptPayout ReceiptKind = "payout"
)

// ReceiptParty is one side of the movement as a receipt shows it.
type ReceiptParty struct {
	Name string
	// MaskedDocument is the CPF or CNPJ already masked (domain.MaskTaxID):
	// a renderer never receives a document in clear, so none can leak into
	// a receipt. "" when unknown.
	MaskedDocument string
	DocumentKind   domain.TaxIDKind
	// PixKey is the Pix key the money went to, already masked; "" when
	// the receipt does not name one.
	PixKey string
	// Institution is the bank or payment institution that holds the
	// party's account, "" when unknown.
	Institution string
}

// Receipt is everything a receipt shows, already chosen and masked by the
// app; a renderer only lays it out and translates its labels.
type Receipt struct {
	Kind   ReceiptKind
	Locale domain.Locale
	// Test receipts are of sandbox money and say so on the page.
	Mode     domain.Mode
	Amount   int64
	Currency domain.Currency
	// Fee is what the movement cost the merchant on top of Amount (the
	// Pix-out fee of a payout or a cashout refund); 0 prints no fee line.
	Fee int64
	// RefundStrategy is how a refund travelled (a devolution of the
	// original Pix, or a cashout by a new one); "" prints no line.
	RefundStrategy domain.RefundStrategy
	// At is when the money moved (paid, refunded, paid out).
	At time.Time
	// IssuedAt is when the receipt was drawn.
	IssuedAt time.Time
	Method   domain.Method
	// From paid To: for a payment the payer paid the merchant; for a
	// refund the merchant sent money back — to the payer, or for a
	// cashout to a key the merchant named, to that key (PixKey only); for
	// a payout the merchant's balance went to a Pix key.
	From, To ReceiptParty
	// Description is the payment's description (metadata.description) or
	// the refund's reason.
	Description string
	// TransactionID is the payment's tx_ id; ReferenceID the refund's re_
	// or the payout's id, "" for a payment receipt.
	TransactionID string
	ReferenceID   string
	// EndToEndID identifies this Pix; OriginalEndToEndID the payment a
	// refund returns. TxID is the charge's Pix txid.
	EndToEndID         string
	OriginalEndToEndID string
	TxID               string
	// Due is what a due-date charge's payment was made of (Amount is its
	// AmountDue) and DueDate the charge's due date; nil prints no lines.
	Due     *domain.DueBreakdown
	DueDate string
}

// ReceiptRenderer draws receipts.
type ReceiptRenderer interface {
	// RenderPDF returns r as a PDF document. It fails only on a
	// rendering fault, never because of what r says.
	RenderPDF(r Receipt) ([]byte, error)
}
