package client

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// TxStatus is a status in the transaction vocabulary of /v1/payments and
// the legacy payment.* webhooks.
type TxStatus string

// Transaction statuses.
const (
	TxPending        TxStatus = "PENDING"
	TxWaitingPayment TxStatus = "WAITING_PAYMENT"
	TxProcessing     TxStatus = "PROCESSING"
	TxPaid           TxStatus = "PAID"
	TxApproved       TxStatus = "APPROVED"
	TxRefused        TxStatus = "REFUSED"
	TxCancelled      TxStatus = "CANCELLED"
	TxExpired        TxStatus = "EXPIRED"
	TxRefunded       TxStatus = "REFUNDED"
	TxChargeback     TxStatus = "CHARGEBACK"
	TxDispute        TxStatus = "DISPUTE"
)

// Payment methods of the payments surface.
const (
	MethodPix        = "PIX"
	MethodCreditCard = "CREDIT_CARD"
	MethodMBWay      = "MBWAY"
	MethodMultibanco = "MULTIBANCO"
	MethodBoleto     = "BOLETO"
	MethodCrypto     = "CRYPTO"
)

// Payment is a charge in the transaction wire format. Create fills ID,
// Status, Amount, Currency, PaymentMethods, the Customer fields, Metadata
// and CreatedAt; Get and List fill the read format, whose method fields
// stay nil until the acquirer filled them (usually within 3 s of create)
// or when they do not apply.
type Payment struct {
	// ID is "tx_" and the raw id (the same charge as "ch_" + raw).
	ID             string   `json:"id"`
	Status         TxStatus `json:"status"`
	Amount         int64    `json:"amount"`
	Currency       string   `json:"currency"`
	PaymentMethods []string `json:"paymentMethods"`
	// Customer fields: create response only.
	CustomerName     *string `json:"customerName,omitempty"`
	CustomerDocument *string `json:"customerDocument,omitempty"`
	CustomerEmail    *string `json:"customerEmail,omitempty"`
	// PaidWith is the method actually used, once paid.
	PaidWith *string `json:"paidWith"`
	// PixQRCode is a data-URL PNG (single reads only).
	PixQRCode       *string    `json:"pixQrCode"`
	PixCopyPaste    *string    `json:"pixCopyPaste"`
	PixExpiresAt    *time.Time `json:"pixExpiresAt"`
	CardRedirectURL *string    `json:"cardRedirectUrl"`
	MBEntity        *string    `json:"mbEntity"`
	MBReference     *string    `json:"mbReference"`
	MBExpiresAt     *time.Time `json:"mbExpiresAt"`
	BoletoBarcode   *string    `json:"boletoBarcode"`
	BoletoLine      *string    `json:"boletoLine"`
	BoletoPDFURL    *string    `json:"boletoPdfUrl"`
	BoletoExpiresAt *time.Time `json:"boletoExpiresAt"`
	CryptoAddress   *string    `json:"cryptoAddress"`
	CryptoNetwork   *string    `json:"cryptoNetwork"`
	CryptoCurrency  *string    `json:"cryptoCurrency"`
	// CryptoAmount is a decimal in the crypto currency's units, kept as
	// text so no precision is lost.
	CryptoAmount *json.Number `json:"cryptoAmount"`
	// Fees in minor units; NetAmount = Amount - ProviderFee - PlatformFee.
	ProviderFee int64          `json:"providerFee"`
	PlatformFee int64          `json:"platformFee"`
	NetAmount   int64          `json:"netAmount"`
	Metadata    map[string]any `json:"metadata"`
	CreatedAt   time.Time      `json:"createdAt"`
	PaidAt      *time.Time     `json:"paidAt"`
	// Splits are a split payment's shares, each with its status in the
	// payments vocabulary (PENDING, PAID, CANCELLED), and FeePayer who
	// bore the fees; empty for other payments and in the create answer.
	Splits   []PaymentSplit `json:"splits,omitempty"`
	FeePayer string         `json:"feePayer,omitempty"`
}

// PaymentParams create a payment (POST /v1/payments).
type PaymentParams struct {
	// Amount in minor units, > 0. Required.
	Amount int64 `json:"amount"`
	// Currency: 3–8 characters (BRL, EUR, USD, USDT...), default BRL.
	Currency string `json:"currency,omitempty"`
	// PaymentMethods: one or more of the Method constants. Required.
	PaymentMethods []string `json:"paymentMethods"`
	// CustomerID is your user's id, echoed in legacy webhooks.
	CustomerID       string `json:"customerId,omitempty"`
	CustomerName     string `json:"customerName,omitempty"`
	CustomerDocument string `json:"customerDocument,omitempty"`
	CustomerEmail    string `json:"customerEmail,omitempty"`
	// Metadata: returnUrl for CREDIT_CARD; phone (E.164) for MBWAY.
	Metadata map[string]any `json:"metadata,omitempty"`
	// WebhookURL receives this payment's legacy events, signed with the
	// transaction secret.
	WebhookURL string `json:"webhookUrl,omitempty"`
	// IdempotencyKey (8–128 characters); empty: the client generates one
	// and reuses it for its own retries.
	IdempotencyKey string `json:"idempotencyKey"`
	// Splits share the net among the platform's sub-accounts, as
	// ChargeParams.Splits; FeePayer is FeePayerPlatform (default) or
	// FeePayerProportional.
	Splits   []Split `json:"splits,omitempty"`
	FeePayer string  `json:"feePayer,omitempty"`
}

// RefundStatus is a refund's status.
type RefundStatus string

// Refund statuses: PENDING → IN_PROGRESS → REFUNDED or FAILED.
const (
	RefundPending    RefundStatus = "PENDING"
	RefundInProgress RefundStatus = "IN_PROGRESS"
	RefundRefunded   RefundStatus = "REFUNDED"
	RefundFailed     RefundStatus = "FAILED"
)

// Refund strategies (PIX).
const (
	// StrategyDevolution returns the money by the original end-to-end id.
	StrategyDevolution = "devolution"
	// StrategyCashout sends a new Pix to the payer (the default).
	StrategyCashout = "cashout"
)

// Refund is a refund of a payment.
type Refund struct {
	// ID is "re_" and the raw id.
	ID            string       `json:"id"`
	TransactionID string       `json:"transactionId"`
	Amount        int64        `json:"amount"`
	Currency      string       `json:"currency"`
	Status        RefundStatus `json:"status"`
	Reason        string       `json:"reason"`
	CreatedAt     time.Time    `json:"createdAt"`
	// Strategy is StrategyDevolution or StrategyCashout for a Pix refund,
	// "" for a card refund.
	Strategy string `json:"strategy"`
	// DestinationKey is the Pix key a cashout was sent to, masked
	// ("j***@example.com", "***.982.247-**"), and DestinationKeyType its
	// type (cpf, cnpj, email, phone, evp); both "" for a devolution and
	// for a cashout to the payer's own document.
	DestinationKey     string `json:"destinationKey"`
	DestinationKeyType string `json:"destinationKeyType"`
	// Fee is the Pix-out fee debited from the wallet with the amount.
	Fee int64 `json:"fee"`
}

// RefundParams refund a PAID or APPROVED payment.
type RefundParams struct {
	// Amount in minor units; 0 refunds what remains.
	Amount int64 `json:"amount,omitempty"`
	// Reason, up to 500 characters.
	Reason string `json:"reason,omitempty"`
	// Strategy: StrategyDevolution or StrategyCashout (default).
	Strategy string `json:"strategy,omitempty"`
	// PassFeeToTenant debits the Pix-out fee of a cashout from your wallet.
	PassFeeToTenant bool `json:"passFeeToTenant,omitempty"`
	// DestinationKey sends a cashout to this Pix key instead of the payer.
	DestinationKey string `json:"destinationKey,omitempty"`
	// ReverseSplits, on a split payment, says what each split gives back;
	// nil takes back in proportion, a pointer to an empty slice nothing
	// (the platform bears the refund).
	ReverseSplits *[]SplitReversal `json:"reverseSplits,omitempty"`
	// IdempotencyKey (8–128 characters); empty: generated by the client.
	IdempotencyKey string `json:"idempotencyKey"`
}

// PaymentsService is /v1/payments.
type PaymentsService struct{ c *Client }

// Create creates a payment with one or more methods.
func (s *PaymentsService) Create(ctx context.Context, p PaymentParams) (*Payment, error) {
	if p.IdempotencyKey == "" {
		p.IdempotencyKey = NewIdempotencyKey()
	}
	var out Payment
	if _, err := s.c.do(ctx, request{method: http.MethodPost, path: "/payments", body: p}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Get reads a payment (tx_..., ch_... or raw id), with its QR code.
func (s *PaymentsService) Get(ctx context.Context, id string) (*Payment, error) {
	var out Payment
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/payments/" + pathID(id)}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// PaymentListParams filter and page the payment list.
type PaymentListParams struct {
	// Page is 1-based (default 1); List starts there.
	Page int
	// Limit is the page size, 1–100 (default 20).
	Limit  int
	Status TxStatus
	// StartDate and EndDate bound createdAt, inclusive.
	StartDate time.Time
	EndDate   time.Time
	// SortBy is a field name (default createdAt); SortOrder "asc" or
	// "desc" (default).
	SortBy    string
	SortOrder string
}

func (p PaymentListParams) query() url.Values {
	q := url.Values{}
	if p.Page > 0 {
		q.Set("page", strconv.Itoa(p.Page))
	}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.Status != "" {
		q.Set("status", string(p.Status))
	}
	if !p.StartDate.IsZero() {
		q.Set("startDate", p.StartDate.UTC().Format(time.RFC3339Nano))
	}
	if !p.EndDate.IsZero() {
		q.Set("endDate", p.EndDate.UTC().Format(time.RFC3339Nano))
	}
	if p.SortBy != "" {
		q.Set("sortBy", p.SortBy)
	}
	if p.SortOrder != "" {
		q.Set("sortOrder", p.SortOrder)
	}
	return q
}

// PaymentList is one page of payments.
type PaymentList struct {
	Data  []*Payment `json:"data"`
	Total int        `json:"total"`
	Page  int        `json:"page"`
	Limit int        `json:"limit"`
}

// ListPage reads one page of payments (GET /v1/payments).
func (s *PaymentsService) ListPage(ctx context.Context, p PaymentListParams) (*PaymentList, error) {
	var out PaymentList
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/payments", query: p.query()}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// List iterates over every payment matching p, page after page from
// p.Page. Pages are offsets: a payment created while you iterate in the
// default newest-first order shifts the later pages; the iterator skips
// what it already yielded, so each payment comes once (one created after
// the walk began may not come at all). An error is yielded once and ends
// the iteration.
func (s *PaymentsService) List(ctx context.Context, p PaymentListParams) iter.Seq2[*Payment, error] {
	p.Page = max(p.Page, 1)
	return unique(paginate(p, func(p PaymentListParams) ([]*Payment, PaymentListParams, bool, error) {
		page, err := s.ListPage(ctx, p)
		if err != nil {
			return nil, p, false, err
		}
		p.Page = page.Page + 1
		return page.Data, p, page.Page*page.Limit < page.Total, nil
	}), func(pm *Payment) string { return pm.ID })
}

// Cancel cancels a payment still WAITING_PAYMENT, PENDING or PROCESSING
// (fires payment.failed). A settled payment must be refunded instead.
func (s *PaymentsService) Cancel(ctx context.Context, id string) (*Payment, error) {
	var out Payment
	if _, err := s.c.do(ctx, request{method: http.MethodPost, path: "/payments/" + pathID(id) + "/cancel", class: notSentOnly}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Refund refunds a PAID or APPROVED payment in full or in part. The
// refund starts PENDING; payment.refunded webhooks report its progress.
func (s *PaymentsService) Refund(ctx context.Context, id string, p RefundParams) (*Refund, error) {
	if p.IdempotencyKey == "" {
		p.IdempotencyKey = NewIdempotencyKey()
	}
	var out Refund
	if _, err := s.c.do(ctx, request{method: http.MethodPost, path: "/payments/" + pathID(id) + "/refund", body: p}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Refunds lists a payment's refunds, newest first.
func (s *PaymentsService) Refunds(ctx context.Context, id string) ([]*Refund, error) {
	var out struct {
		Data []*Refund `json:"data"`
	}
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/payments/" + pathID(id) + "/refunds"}, &out); err != nil {
		return nil, err
	}
	return out.Data, nil
}

// Receipt is a payment's or refund's receipt (comprovante), a PDF.
type Receipt struct {
	// ContentType is application/pdf.
	ContentType string `json:"contentType"`
	// Filename suggests a name for the file (comprovante-tx_….pdf).
	Filename string `json:"filename"`
	// Base64 is the document, standard base64.
	Base64 string `json:"base64"`
}

// Bytes decodes the document.
func (r *Receipt) Bytes() ([]byte, error) { return base64.StdEncoding.DecodeString(r.Base64) }

// Receipt fetches the receipt of a credited payment, in Brazilian
// Portuguese, or in lang ("en") when given.
func (s *PaymentsService) Receipt(ctx context.Context, id string, lang ...string) (*Receipt, error) {
	return s.c.receipt(ctx, "/payments/"+pathID(id)+"/receipt", lang)
}

// RefundReceipt fetches the receipt of a confirmed (REFUNDED) refund of
// a payment (comprovante de devolução), in lang ("en") when given.
func (s *PaymentsService) RefundReceipt(ctx context.Context, paymentID, refundID string, lang ...string) (*Receipt, error) {
	return s.c.receipt(ctx, "/payments/"+pathID(paymentID)+"/refunds/"+pathID(refundID)+"/receipt", lang)
}

// receipt fetches a receipt (of a payment, a refund or a payout).
func (c *Client) receipt(ctx context.Context, path string, lang []string) (*Receipt, error) {
	r := request{method: http.MethodGet, path: path}
	if len(lang) > 0 && lang[0] != "" {
		r.query = url.Values{"lang": {lang[0]}}
	}
	var out Receipt
	if _, err := c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ProviderStatus is the acquirer's live view of a payment.
type ProviderStatus struct {
	LocalStatus           TxStatus        `json:"localStatus"`
	Provider              string          `json:"provider"`
	ProviderTransactionID string          `json:"providerTransactionId"`
	ProviderStatus        string          `json:"providerStatus"`
	RawResponse           json.RawMessage `json:"rawResponse"`
}

// ProviderStatus asks the acquirer for the payment's status, bypassing any
// cache. A payment that never reached a provider is an *Error with code
// TRANSACTION_HAS_NO_PROVIDER_REFERENCE.
func (s *PaymentsService) ProviderStatus(ctx context.Context, id string) (*ProviderStatus, error) {
	var out ProviderStatus
	if _, err := s.c.do(ctx, request{method: http.MethodGet, path: "/payments/" + pathID(id) + "/provider-status"}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ResendResult is the answer of ResendWebhook.
type ResendResult struct {
	Resent bool     `json:"resent"`
	Status TxStatus `json:"status"`
}

// ResendWebhook emits the payment's current status again as new
// deliveries.
func (s *PaymentsService) ResendWebhook(ctx context.Context, id string) (*ResendResult, error) {
	var out ResendResult
	if _, err := s.c.do(ctx, request{method: http.MethodPost, path: "/payments/" + pathID(id) + "/resend-webhook", class: notSentOnly}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
