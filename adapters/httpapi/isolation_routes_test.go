package httpapi_test

import (
	"strings"
)

// isoRoute says how TestSubaccountIsolation calls one API-key route.
type isoRoute struct {
	// obj is the kind of object the path's {id} names ({refundId} is
	// always the refund); "" for a route that names none.
	obj string
	// query, on a list, names an object of the other scope as a cursor
	// or filter ("starting_after={charge}"): it must find nothing.
	query string
	// body is what a write sends, enough to reach its lookup.
	body any
	// empty, on a list or total, is what a scope with nothing in it
	// answers; nil on a route that reads no collection.
	empty func(apiResp) bool
}

// Object kinds of isoRoute.obj.
const (
	objCharge       = "charge"
	objPayment      = "payment"
	objRefund       = "refund"
	objPayout       = "payout"
	objEvent        = "event"
	objEndpoint     = "endpoint"
	objSubscription = "subscription"
	objBatch        = "batch"
	objSubaccount   = "subaccount"
	objTransfer     = "transfer"
)

// isoChecked lists every route under the API-key middleware by name. A
// route added to the router must be added here (or to isoExempt), else
// TestSubaccountIsolation fails.
var isoChecked = map[string]isoRoute{
	// Writes that name no object: only the header checks apply.
	"charges.create":                     {body: map[string]any{"amount": 1000, "payment_method": "pix"}},
	"pix_charges.create":                 {body: map[string]any{"amount": 1000}},
	"charges.batch_create":               {body: map[string]any{"charges": []any{map[string]any{"amount": 1000, "payment_method": "pix"}}}},
	"payments.create":                    {body: map[string]any{"amount": 1000, "paymentMethods": []string{"PIX"}, "idempotencyKey": "iso-payment-create"}},
	"payouts.create":                     {body: map[string]any{"amount": 100, "destination": map[string]any{"pix_key": "financeiro@example.com"}}},
	"transfers.create":                   {body: map[string]any{"amount": 1, "destination": "acct_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}},
	"webhooks.endpoints.create":          {body: map[string]any{"url": "http://127.0.0.1:9/hook", "events": []string{"charge.paid"}}},
	"webhooks.transaction_secret.rotate": {body: map[string]any{}},
	"subaccounts.create":                 {body: map[string]any{"name": "N", "document": sellerCPF, "email": "n@example.com"}},
	"subscriptions.create":               {body: map[string]any{"amount": 990, "interval": "monthly"}},

	// Lists and totals: a scope with nothing sees nothing of the others'.
	"charges.list":  {query: "starting_after={charge}", empty: emptyData},
	"payments.list": {empty: func(r apiResp) bool { return emptyData(r) && r.num("total") == 0 }},
	"payments.stats": {empty: func(r apiResp) bool {
		return r.Status == 200 && r.num("totalTransactions") == 0 && r.num("paidTransactions") == 0
	}},
	"payments.metrics": {empty: func(r apiResp) bool {
		return r.Status == 200 && r.num("created") == 0 && r.num("paid") == 0 && r.num("volume") == 0
	}},
	"wallets.list":             {empty: emptyWallets},
	"wallets.balance":          {empty: func(r apiResp) bool { return r.Status == 200 && r.num("available") == 0 && r.num("pending") == 0 }},
	"webhooks.endpoints.list":  {empty: emptyData},
	"webhooks.deliveries.list": {query: "endpointId={endpoint}", empty: emptyData},
	"webhooks.stats":           {empty: func(r apiResp) bool { return r.Status == 200 && r.num("total") == 0 }},
	"events.list":              {query: "starting_after={event}", empty: emptyData},
	"payouts.list":             {query: "starting_after={payout}", empty: emptyData},
	"transfers.list":           {query: "starting_after={transfer}", empty: emptyData},
	"subaccounts.list":         {query: "starting_after={subaccount}", empty: emptyData},
	"subscriptions.list":       {query: "starting_after={subscription}", empty: emptyData},

	// One object of the other scope: always 404.
	"charges.batch_get":                    {obj: objBatch},
	"charges.get":                          {obj: objCharge},
	"charges.update":                       {obj: objCharge, body: map[string]any{"due_date": "2099-01-01"}},
	"charges.amount_due":                   {obj: objCharge},
	"test_helpers.charges.pay":             {obj: objCharge, body: map[string]any{}},
	"test_helpers.charges.expire":          {obj: objCharge, body: map[string]any{}},
	"test_helpers.charges.med_return":      {obj: objCharge, body: map[string]any{"reason": "fraud"}},
	"payments.get":                         {obj: objPayment},
	"payments.cancel":                      {obj: objPayment, body: map[string]any{}},
	"payments.refund":                      {obj: objPayment, body: map[string]any{"idempotencyKey": "iso-refund-key", "amount": 100}},
	"payments.refunds":                     {obj: objPayment},
	"payments.receipt":                     {obj: objPayment},
	"payments.refund_receipt":              {obj: objPayment},
	"payments.provider_status":             {obj: objPayment},
	"payments.resend_webhook":              {obj: objPayment, body: map[string]any{}},
	"test_helpers.payments.transition":     {obj: objPayment, body: map[string]any{"status": "PAID"}},
	"test_helpers.refunds.fail":            {obj: objRefund, body: map[string]any{}},
	"webhooks.endpoints.update":            {obj: objEndpoint, body: map[string]any{"status": "INACTIVE"}},
	"webhooks.endpoints.delete":            {obj: objEndpoint},
	"webhooks.endpoints.rotate_secret":     {obj: objEndpoint, body: map[string]any{}},
	"events.get":                           {obj: objEvent},
	"payouts.get":                          {obj: objPayout},
	"transfers.get":                        {obj: objTransfer},
	"payouts.cancel":                       {obj: objPayout, body: map[string]any{}},
	"payouts.receipt":                      {obj: objPayout},
	"test_helpers.payouts.pay":             {obj: objPayout, body: map[string]any{}},
	"test_helpers.payouts.fail":            {obj: objPayout, body: map[string]any{}},
	"subaccounts.get":                      {obj: objSubaccount},
	"subaccounts.update":                   {obj: objSubaccount, body: map[string]any{"name": "Tomada"}},
	"subaccounts.disable":                  {obj: objSubaccount, body: map[string]any{}},
	"subaccounts.invite":                   {obj: objSubaccount, body: map[string]any{"email": "convite@example.com"}},
	"subaccounts.invitations":              {obj: objSubaccount},
	"subscriptions.get":                    {obj: objSubscription},
	"subscriptions.cancel":                 {obj: objSubscription, body: map[string]any{}},
	"subscriptions.charges":                {obj: objSubscription},
	"subscriptions.set_amount":             {obj: objSubscription, body: map[string]any{"amount": 500}},
	"test_helpers.subscriptions.authorize": {obj: objSubscription, body: map[string]any{}},
	"test_helpers.subscriptions.reject":    {obj: objSubscription, body: map[string]any{}},
	"test_helpers.subscriptions.revoke":    {obj: objSubscription, body: map[string]any{}},
	"test_helpers.subscriptions.advance":   {obj: objSubscription, body: map[string]any{}},
}

// isoExempt are the routes that take no API key, so neither a platform's
// key nor Quita-Account reaches them; each with the reason. Prefixes end
// in ".".
var isoExempt = map[string]string{
	"healthz":                "probe: no key, no account",
	"readyz":                 "probe: no key, no account",
	"metrics":                "Prometheus scrape: no key, no account",
	"checkout.":              "public checkout pages: no key, addressed by the charge's unguessable id",
	"dashboard.":             "web dashboard: a login's session cookie, never an API key; sub-accounts have no logins",
	"providers.":             "PSP callbacks: the provider's mTLS/credentials, never an API key",
	"auth.":                  "dashboard login and logout: a login's token, never an API key",
	"api_keys.":              "dashboard-token routes (Authorization: Bearer), scoped by the token's account; sub-accounts have no logins",
	"audit_logs.list":        "dashboard-token route, scoped by the token's account; sub-accounts have no logins",
	"request_logs.list":      "dashboard-token route, scoped by the token's account; sub-accounts have no logins",
	"webhooks.event_catalog": "public: the list of event names, no account data",
	"openapi.document":       "public: the API's description, no account data",
}

// exemptReason is why the route name is exempt, "" if it is not.
func exemptReason(name string) string {
	if r, ok := isoExempt[name]; ok {
		return r
	}
	for p, r := range isoExempt {
		if strings.HasSuffix(p, ".") && strings.HasPrefix(name, p) {
			return r
		}
	}
	return ""
}

func emptyData(r apiResp) bool {
	data, ok := r.Body["data"].([]any)
	return r.Status == 200 && ok && len(data) == 0
}

func emptyWallets(r apiResp) bool {
	if r.Status != 200 {
		return false
	}
	for _, w := range r.List {
		m, _ := w.(map[string]any)
		if m["balance"] != 0.0 || m["pendingBalance"] != 0.0 {
			return false
		}
	}
	return true
}
