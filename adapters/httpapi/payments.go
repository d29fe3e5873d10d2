package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// PaymentsController serves /v1/payments, /v1/wallets and the payments
// test helpers.
type PaymentsController struct {
	payments *app.PaymentService
	qr       QRRenderer
	// webhooks checks a per-transaction webhookUrl at create with the
	// endpoint rules (https, no private addresses in live mode).
	webhooks *app.WebhookService
}

// Routes registers the payments routes.
func (c *PaymentsController) Routes(mr *mux.Router) {
	r := paramsRouter{mr, paymentsParams}
	r.HandleFunc("/payments", c.create).Methods(http.MethodPost).Name("payments.create")
	r.HandleFunc("/payments", c.list).Methods(http.MethodGet).Name("payments.list")
	r.HandleFunc("/payments/stats", c.stats).Methods(http.MethodGet).Name("payments.stats")
	r.HandleFunc("/payments/metrics", c.metrics).Methods(http.MethodGet).Name("payments.metrics")
	r.HandleFunc("/payments/{id}", c.get).Methods(http.MethodGet).Name("payments.get")
	r.HandleFunc("/payments/{id}/cancel", c.cancel).Methods(http.MethodPost).Name("payments.cancel")
	r.HandleFunc("/payments/{id}/refund", c.refund).Methods(http.MethodPost).Name("payments.refund")
	r.HandleFunc("/payments/{id}/refunds", c.refunds).Methods(http.MethodGet).Name("payments.refunds")
	r.HandleFunc("/payments/{id}/receipt", c.receipt).Methods(http.MethodGet).Name("payments.receipt")
	r.HandleFunc("/payments/{id}/provider-status", c.providerStatus).Methods(http.MethodGet).Name("payments.provider_status")
	r.HandleFunc("/payments/{id}/resend-webhook", c.resend).Methods(http.MethodPost).Name("payments.resend_webhook")
	r.HandleFunc("/wallets", c.wallets).Methods(http.MethodGet).Name("wallets.list")
	r.HandleFunc("/wallets/balance", c.balance).Methods(http.MethodGet).Name("wallets.balance")
	r.HandleFunc("/test_helpers/payments/{id}/transition", c.transition).Methods(http.MethodPost).Name("test_helpers.payments.transition")
	r.HandleFunc("/test_helpers/refunds/{id}/fail", c.failRefund).Methods(http.MethodPost).Name("test_helpers.refunds.fail")
}

type createPaymentRequest struct {
	Amount           *int64                     `json:"amount"`
	Currency         string                     `json:"currency"`
	PaymentMethods   []string                   `json:"paymentMethods"`
	CustomerID       string                     `json:"customerId"`
	CustomerName     string                     `json:"customerName"`
	CustomerDocument string                     `json:"customerDocument"`
	CustomerEmail    string                     `json:"customerEmail"`
	Metadata         map[string]json.RawMessage `json:"metadata"`
	WebhookURL       string                     `json:"webhookUrl"`
	IdempotencyKey   string                     `json:"idempotencyKey"`
}

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
	out := txRead{ID: domain.PrefixTransaction + s.ID, Status: s.Status, Amount: s.Amount, Currency: s.Currency,
		PaymentMethods: s.Methods, CardRedirectURL: optStr(d.CardRedirectURL), MBEntity: optStr(d.MBEntity),
		MBReference: optStr(d.MBReference), MBExpiresAt: optTime(d.MBExpiresAt), BoletoBarcode: optStr(d.BoletoBarcode),
		BoletoLine: optStr(d.BoletoLine), BoletoPDFURL: optStr(d.BoletoPDFURL), BoletoExpiresAt: optTime(d.BoletoExpiresAt),
		CryptoAddress: optStr(d.CryptoAddress), CryptoNetwork: optStr(d.CryptoNetwork), CryptoCurrency: optStr(d.CryptoCurrency),
		CryptoAmount: optStr(d.CryptoAmount), ProviderFee: s.Fees.Provider, PlatformFee: s.Fees.Platform,
		NetAmount: s.Fees.Net(s.Amount), Metadata: s.Metadata, CreatedAt: domain.Timestamp(s.CreatedAt)}
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
	return out
}

func (c *PaymentsController) create(w http.ResponseWriter, r *http.Request) {
	var req createPaymentRequest
	body, err := readJSON(w, r, true, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	key, err := checkIdempotencyKey("idempotencyKey", req.IdempotencyKey)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if req.Amount == nil {
		writeError(w, r, badRequest("amount", "parameter_missing", "amount is required"))
		return
	}
	if len(req.PaymentMethods) == 0 {
		writeError(w, r, badRequest("paymentMethods", "parameter_missing", "paymentMethods needs one or more of PIX, CREDIT_CARD, MBWAY, MULTIBANCO, BOLETO, CRYPTO"))
		return
	}
	methods := make([]domain.Method, 0, len(req.PaymentMethods))
	for _, m := range req.PaymentMethods {
		dm := domain.Method(m)
		if !dm.Valid() {
			writeError(w, r, badRequest("paymentMethods", "parameter_invalid", "unknown payment method "+strconv.Quote(m)))
			return
		}
		methods = append(methods, dm)
	}
	if req.Currency != "" && (len(req.Currency) < 3 || len(req.Currency) > 8) {
		writeError(w, r, badRequest("currency", "parameter_invalid", "currency must be 3 to 8 characters"))
		return
	}
	if req.WebhookURL != "" && c.webhooks != nil {
		if err := c.webhooks.CheckWebhookURL(r.Context(), callerFrom(r.Context()).Mode, req.WebhookURL); err != nil {
			writeError(w, r, err)
			return
		}
	}
	in := app.CreateChargeInput{
		Amount: *req.Amount, Currency: req.Currency, Methods: methods,
		Customer:    domain.Customer{Name: req.CustomerName, Document: req.CustomerDocument, Email: req.CustomerEmail},
		CustomerRef: req.CustomerID, Metadata: metadataValues(req.Metadata), WebhookURL: req.WebhookURL,
	}
	idem := app.Idempotency{Key: key, Fingerprint: fingerprint(r.Method, r.URL.Path, body)}
	resp, err := c.payments.Charges().Create(r.Context(), callerFrom(r.Context()), in, idem, func(ch *domain.Charge) (app.Response, error) {
		return created(txCreateBody(ch))
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	if resp.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeRaw(w, resp.StatusCode, resp.Body)
}

func (c *PaymentsController) paymentID(w http.ResponseWriter, r *http.Request) (string, bool) {
	raw, ok := domain.ParseChargeID(mux.Vars(r)["id"])
	if !ok {
		writeError(w, r, ports.ErrNotFound)
	}
	return raw, ok
}

func (c *PaymentsController) get(w http.ResponseWriter, r *http.Request) {
	raw, ok := c.paymentID(w, r)
	if !ok {
		return
	}
	ch, err := c.payments.Charges().Get(r.Context(), callerFrom(r.Context()), raw)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, c.txBody(ch, true))
}

type paymentsPage struct {
	Data  []txRead `json:"data"`
	Total int      `json:"total"`
	Page  int      `json:"page"`
	Limit int      `json:"limit"`
}

func intParam(v string, param string, lo, hi, def int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, badRequest(param, "parameter_invalid", param+" must be an integer from "+strconv.Itoa(lo)+" to "+strconv.Itoa(hi))
	}
	return n, nil
}

func (c *PaymentsController) list(w http.ResponseWriter, r *http.Request) {
	v := r.URL.Query()
	q := ports.PaymentQuery{Scope: callerFrom(r.Context()).Scope(), SortBy: v.Get("sortBy"), Desc: true}
	var err error
	if q.Page, err = intParam(v.Get("page"), "page", 1, 1_000_000, 1); err != nil {
		writeError(w, r, err)
		return
	}
	if q.Limit, err = intParam(v.Get("limit"), "limit", 1, 100, 20); err != nil {
		writeError(w, r, err)
		return
	}
	if s := v.Get("status"); s != "" {
		q.Status = domain.TxStatus(s)
		if !q.Status.Valid() {
			writeError(w, r, badRequest("status", "parameter_invalid", "status must be a transaction status such as WAITING_PAYMENT or PAID"))
			return
		}
	}
	switch v.Get("sortOrder") {
	case "", "desc":
	case "asc":
		q.Desc = false
	default:
		writeError(w, r, badRequest("sortOrder", "parameter_invalid", "sortOrder must be asc or desc"))
		return
	}
	for _, b := range []struct {
		param string
		dst   **time.Time
		end   bool
	}{{"startDate", &q.CreatedAfter, false}, {"endDate", &q.CreatedBefore, true}} {
		s := v.Get(b.param)
		if s == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			// A bare date covers its whole day (inclusive bounds).
			d, derr := time.Parse("2006-01-02", s)
			if derr != nil {
				writeError(w, r, badRequest(b.param, "parameter_invalid", b.param+" must be an ISO 8601 date or timestamp"))
				return
			}
			t = d
			if b.end {
				t = d.Add(24*time.Hour - time.Microsecond)
			}
		}
		t = t.UTC()
		*b.dst = &t
	}
	cs, total, err := c.payments.List(r.Context(), q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := paymentsPage{Data: make([]txRead, 0, len(cs)), Total: total, Page: q.Page, Limit: q.Limit}
	for _, ch := range cs {
		out.Data = append(out.Data, c.txBody(ch, false))
	}
	writeJSON(w, http.StatusOK, out)
}

func (c *PaymentsController) cancel(w http.ResponseWriter, r *http.Request) {
	raw, ok := c.paymentID(w, r)
	if !ok {
		return
	}
	ch, err := c.payments.Cancel(r.Context(), callerFrom(r.Context()), raw)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, c.txBody(ch, false))
}

type refundRequest struct {
	IdempotencyKey  string `json:"idempotencyKey"`
	Amount          *int64 `json:"amount"`
	Reason          string `json:"reason"`
	Strategy        string `json:"strategy"`
	PassFeeToTenant bool   `json:"passFeeToTenant"`
	DestinationKey  string `json:"destinationKey"`
}

type refundJSON struct {
	ID            string              `json:"id"`
	TransactionID string              `json:"transactionId"`
	Amount        int64               `json:"amount"`
	Currency      domain.Currency     `json:"currency"`
	Status        domain.RefundStatus `json:"status"`
	Reason        string              `json:"reason"`
	CreatedAt     domain.Timestamp    `json:"createdAt"`
}

func refundBody(rf domain.Refund) refundJSON {
	return refundJSON{ID: domain.PrefixRefund + rf.ID, TransactionID: domain.PrefixTransaction + rf.ChargeID, Amount: rf.Amount,
		Currency: rf.Currency, Status: rf.Status, Reason: rf.Reason, CreatedAt: domain.Timestamp(rf.CreatedAt)}
}

func (c *PaymentsController) refund(w http.ResponseWriter, r *http.Request) {
	raw, ok := c.paymentID(w, r)
	if !ok {
		return
	}
	// Another account's payment is 404 before any body is looked at.
	if _, err := c.payments.Charges().Get(r.Context(), callerFrom(r.Context()), raw); err != nil {
		writeError(w, r, err)
		return
	}
	var req refundRequest
	body, err := readJSON(w, r, true, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	key, err := checkIdempotencyKey("idempotencyKey", req.IdempotencyKey)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if req.Amount != nil && *req.Amount <= 0 {
		writeError(w, r, badRequest("amount", "parameter_invalid", "amount must be a positive integer"))
		return
	}
	if len([]rune(req.Reason)) > 500 {
		writeError(w, r, badRequest("reason", "parameter_invalid", "reason must be at most 500 characters"))
		return
	}
	strategy := domain.RefundStrategy(req.Strategy)
	if strategy != "" && strategy != domain.StrategyDevolution && strategy != domain.StrategyCashout {
		writeError(w, r, badRequest("strategy", "parameter_invalid", "strategy must be devolution or cashout"))
		return
	}
	in := app.RefundInput{Amount: req.Amount, Reason: req.Reason, Strategy: strategy, PassFeeToTenant: req.PassFeeToTenant,
		DestinationKey: req.DestinationKey}
	idem := app.Idempotency{Key: key, Fingerprint: fingerprint(r.Method, r.URL.Path, body)}
	resp, err := c.payments.Refund(r.Context(), callerFrom(r.Context()), raw, in, idem, func(rf domain.Refund) (app.Response, error) {
		return created(refundBody(rf))
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	if resp.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	writeRaw(w, resp.StatusCode, resp.Body)
}

func (c *PaymentsController) refunds(w http.ResponseWriter, r *http.Request) {
	raw, ok := c.paymentID(w, r)
	if !ok {
		return
	}
	rs, err := c.payments.ListRefunds(r.Context(), callerFrom(r.Context()), raw)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := struct {
		Data []refundJSON `json:"data"`
	}{Data: make([]refundJSON, 0, len(rs))}
	for _, rf := range rs {
		out.Data = append(out.Data, refundBody(rf))
	}
	writeJSON(w, http.StatusOK, out)
}

func (c *PaymentsController) receipt(w http.ResponseWriter, r *http.Request) {
	raw, ok := c.paymentID(w, r)
	if !ok {
		return
	}
	pdf, err := c.payments.Receipt(r.Context(), callerFrom(r.Context()), raw)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"contentType": "application/pdf", "base64": base64.StdEncoding.EncodeToString(pdf)})
}

func (c *PaymentsController) providerStatus(w http.ResponseWriter, r *http.Request) {
	raw, ok := c.paymentID(w, r)
	if !ok {
		return
	}
	res, err := c.payments.ProviderStatus(r.Context(), callerFrom(r.Context()), raw)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"localStatus": res.Charge.Status(), "provider": res.Provider, "providerTransactionId": res.ProviderRef,
		"providerStatus": res.Status.Status, "rawResponse": res.Status.RawResponse,
	})
}

func (c *PaymentsController) resend(w http.ResponseWriter, r *http.Request) {
	raw, ok := c.paymentID(w, r)
	if !ok {
		return
	}
	ch, err := c.payments.ResendWebhook(r.Context(), callerFrom(r.Context()), raw)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"resent": true, "status": ch.Status()})
}

func (c *PaymentsController) stats(w http.ResponseWriter, r *http.Request) {
	days, err := intParam(r.URL.Query().Get("days"), "days", 1, 366, 30)
	if err != nil {
		writeError(w, r, err)
		return
	}
	st, err := c.payments.Stats(r.Context(), callerFrom(r.Context()), days)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}

func (c *PaymentsController) metrics(w http.ResponseWriter, r *http.Request) {
	days, err := intParam(r.URL.Query().Get("days"), "days", 1, 366, 7)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var cur domain.Currency
	if s := r.URL.Query().Get("currency"); s != "" {
		if cur, err = domain.ParseCurrency(s); err != nil {
			writeError(w, r, err)
			return
		}
	}
	m, err := c.payments.Metrics(r.Context(), callerFrom(r.Context()), days, cur)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, m)
}

type walletJSON struct {
	Currency       domain.Currency `json:"currency"`
	WalletType     string          `json:"walletType"`
	Balance        int64           `json:"balance"`
	PendingBalance int64           `json:"pendingBalance"`
}

func (c *PaymentsController) wallets(w http.ResponseWriter, r *http.Request) {
	ws, err := c.payments.Wallets(r.Context(), callerFrom(r.Context()))
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]walletJSON, 0, len(ws))
	for _, wl := range ws {
		out = append(out, walletJSON{Currency: wl.Currency, WalletType: "OPERATIONAL", Balance: wl.Available, PendingBalance: wl.Pending})
	}
	writeJSON(w, http.StatusOK, out)
}

type balanceEntry struct {
	Currency  domain.Currency `json:"currency"`
	Available int64           `json:"available"`
	Pending   int64           `json:"pending"`
	Total     int64           `json:"total"`
}

func newBalanceEntry(wl ports.Wallet) balanceEntry {
	return balanceEntry{Currency: wl.Currency, Available: wl.Available, Pending: wl.Pending, Total: wl.Total()}
}

func (c *PaymentsController) balance(w http.ResponseWriter, r *http.Request) {
	ws, err := c.payments.Wallets(r.Context(), callerFrom(r.Context()))
	if err != nil {
		writeError(w, r, err)
		return
	}
	find := func(cur domain.Currency) ports.Wallet {
		for _, wl := range ws {
			if wl.Currency == cur {
				return wl
			}
		}
		return ports.Wallet{Balance: domain.Balance{Currency: cur}}
	}
	if s := r.URL.Query().Get("currency"); s != "" {
		cur, err := domain.ParseCurrency(s)
		if err != nil {
			writeError(w, r, err)
			return
		}
		wl := find(cur)
		writeJSON(w, http.StatusOK, map[string]any{"available": wl.Available, "pending": wl.Pending, "currency": cur,
			"next_release_at": optTimePtr(wl.NextReleaseAt), "next_release_amount": releaseAmount(wl)})
		return
	}
	primary := find(domain.CurrencyBRL)
	bals := make([]balanceEntry, 0, len(ws))
	for _, wl := range ws {
		bals = append(bals, newBalanceEntry(wl))
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"available": primary.Available, "pending": primary.Pending, "total": primary.Total(), "retained": primary.Pending,
		"currency": primary.Currency, "next_release_at": optTimePtr(primary.NextReleaseAt),
		"next_release_amount": releaseAmount(primary), "balances": bals,
		"primary": newBalanceEntry(primary),
	})
}

func optTimePtr(t *time.Time) *domain.Timestamp {
	if t == nil {
		return nil
	}
	return optTime(*t)
}

func releaseAmount(w ports.Wallet) *int64 {
	if w.NextReleaseAt == nil {
		return nil
	}
	a := w.NextReleaseAmount
	return &a
}

type transitionRequest struct {
	Status   string `json:"status"`
	PaidWith string `json:"paidWith"`
}

func (c *PaymentsController) transition(w http.ResponseWriter, r *http.Request) {
	caller, raw, err := testCharge(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if _, err := c.payments.Charges().Get(r.Context(), caller, raw); err != nil {
		writeError(w, r, err)
		return
	}
	var req transitionRequest
	if _, err := readJSON(w, r, true, &req); err != nil {
		writeError(w, r, err)
		return
	}
	if req.Status == "" {
		writeError(w, r, badRequest("status", "parameter_missing", "status is required"))
		return
	}
	ch, err := c.payments.Transition(r.Context(), caller, raw, domain.TxStatus(req.Status), domain.Method(req.PaidWith))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, c.txBody(ch, false))
}

func (c *PaymentsController) failRefund(w http.ResponseWriter, r *http.Request) {
	caller := callerFrom(r.Context())
	raw := strings.TrimPrefix(mux.Vars(r)["id"], domain.PrefixRefund)
	if caller.Mode != domain.ModeTest || !domain.ValidRawID(raw) {
		writeError(w, r, ports.ErrNotFound)
		return
	}
	rf, err := c.payments.FailRefund(r.Context(), caller, raw)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, refundBody(rf))
}
