package httpapi

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
)

// PaymentsController serves /v1/payments, /v1/wallets and the payments
// test helpers.
type PaymentsController struct {
	payments *app.PaymentService
	qr       QRRenderer
	// receipts draws receipts; nil serves no receipt routes.
	receipts *app.ReceiptService
}

// Routes registers the payments routes. Handlers of one payment get its
// raw id from onCharge; every handler returns its answer to handle.
func (c *PaymentsController) Routes(mr *mux.Router) {
	r := paramsRouter{mr, paymentsParams}
	r.Handle("/payments", ownsKey(handle(c.create))).Methods(http.MethodPost).Name("payments.create")
	r.HandleFunc("/payments", handle(c.list)).Methods(http.MethodGet).Name("payments.list")
	r.HandleFunc("/payments/stats", handle(c.stats)).Methods(http.MethodGet).Name("payments.stats")
	r.HandleFunc("/payments/metrics", handle(c.metrics)).Methods(http.MethodGet).Name("payments.metrics")
	r.HandleFunc("/payments/{id}", onCharge(c.get)).Methods(http.MethodGet).Name("payments.get")
	r.HandleFunc("/payments/{id}/cancel", onCharge(c.cancel)).Methods(http.MethodPost).Name("payments.cancel")
	r.Handle("/payments/{id}/refund", ownsKey(onCharge(c.refund))).Methods(http.MethodPost).Name("payments.refund")
	r.HandleFunc("/payments/{id}/refunds", onCharge(c.refunds)).Methods(http.MethodGet).Name("payments.refunds")
	if c.receipts != nil {
		r.HandleFunc("/payments/{id}/receipt", onCharge(c.receipt)).Methods(http.MethodGet).Name("payments.receipt")
		r.HandleFunc("/payments/{id}/refunds/{refundId}/receipt", onCharge(c.refundReceipt)).Methods(http.MethodGet).Name("payments.refund_receipt")
	}
	r.HandleFunc("/payments/{id}/provider-status", onCharge(c.providerStatus)).Methods(http.MethodGet).Name("payments.provider_status")
	r.HandleFunc("/payments/{id}/resend-webhook", onCharge(c.resend)).Methods(http.MethodPost).Name("payments.resend_webhook")
	r.HandleFunc("/wallets", handle(c.wallets)).Methods(http.MethodGet).Name("wallets.list")
	r.HandleFunc("/wallets/balance", handle(c.balance)).Methods(http.MethodGet).Name("wallets.balance")
	r.HandleFunc("/test_helpers/payments/{id}/transition", handle(c.transition)).Methods(http.MethodPost).Name("test_helpers.payments.transition")
	r.HandleFunc("/test_helpers/refunds/{id}/fail", handle(c.failRefund)).Methods(http.MethodPost).Name("test_helpers.refunds.fail")
}
