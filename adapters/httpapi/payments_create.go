package httpapi

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
)

type createPaymentRequest struct {
	Amount           *int64         `json:"amount"`
	Currency         string         `json:"currency"`
	PaymentMethods   []string       `json:"paymentMethods"`
	CustomerID       string         `json:"customerId"`
	CustomerName     string         `json:"customerName"`
	CustomerDocument string         `json:"customerDocument"`
	CustomerEmail    string         `json:"customerEmail"`
	Metadata         metadataObject `json:"metadata"`
	WebhookURL       string         `json:"webhookUrl"`
	IdempotencyKey   string         `json:"idempotencyKey"`
	Splits           []splitJSON    `json:"splits"`
	FeePayer         string         `json:"feePayer"`
}

func (c *PaymentsController) create(w http.ResponseWriter, r *http.Request) (any, error) {
	var req createPaymentRequest
	idem, err := readKeyedJSON(w, r, &req)
	if err != nil {
		return nil, err
	}
	if req.Amount == nil {
		return nil, badRequest("amount", "parameter_missing", "amount is required")
	}
	if len(req.PaymentMethods) == 0 {
		return nil, badRequest("paymentMethods", "parameter_missing", "paymentMethods needs one or more of PIX, CREDIT_CARD, MBWAY, MULTIBANCO, BOLETO, CRYPTO")
	}
	methods := make([]domain.Method, 0, len(req.PaymentMethods))
	for _, m := range req.PaymentMethods {
		dm := domain.Method(m)
		if !dm.Valid() {
			return nil, badRequest("paymentMethods", "parameter_invalid", "unknown payment method "+strconv.Quote(m))
		}
		methods = append(methods, dm)
	}
	if req.Currency != "" && (len(req.Currency) < 3 || len(req.Currency) > 8) {
		return nil, badRequest("currency", "parameter_invalid", "currency must be 3 to 8 characters")
	}
	splits, err := splitsInput(req.Splits)
	if err != nil {
		return nil, err
	}
	// webhookUrl's SSRF check resolves its host, so the charge service runs
	// it after the replay check (app.ChargesConfig.WebhookURLs): a retry
	// of a completed key must answer the original even if DNS now fails.
	in := app.CreateChargeInput{
		Amount: *req.Amount, Currency: req.Currency, Methods: methods,
		Customer:    domain.Customer{Name: req.CustomerName, Document: req.CustomerDocument, Email: req.CustomerEmail},
		CustomerRef: req.CustomerID, Metadata: req.Metadata.values(), WebhookURL: req.WebhookURL,
		Splits: splits, FeePayer: domain.FeePayer(req.FeePayer),
		// A payment in reais (Pix, boleto) is a Brazilian payer's: its
		// document is a CPF or CNPJ, checked as the charges surface checks
		// it; euro methods take any tax id (a NIF).
		StrictDocument: brazilian(req.Currency, methods),
	}
	return c.payments.Charges().Create(r.Context(), callerFrom(r.Context()), in, idem, func(ch *domain.Charge) (app.Response, error) {
		return created(txCreateBody(ch))
	})
}

// brazilian reports whether a payment is in reais: its currency says so,
// or, with none, one of its methods is Pix or boleto.
func brazilian(currency string, methods []domain.Method) bool {
	if currency != "" {
		return strings.EqualFold(currency, string(domain.CurrencyBRL))
	}
	return slices.ContainsFunc(methods, func(m domain.Method) bool { return m == domain.MethodPix || m == domain.MethodBoleto })
}
