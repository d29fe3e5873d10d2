package httpapi_test

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/quitapix/quita/domain"
)

// wantParam fails unless r is status with the envelope's code and param.
func wantParam(t testing.TB, r apiResp, status int, code, param string) {
	t.Helper()
	if r.Status != status || r.code() != code || r.param() != param {
		t.Errorf("got %d %s param %q, want %d %s param %q: %.300s", r.Status, r.code(), r.param(), status, code, param, r.Raw)
	}
}

// Security item 22: what a payment create or a refund stores and copies
// into every event, delivery and list is bounded. customerId is capped
// like the customer fields; repeated paymentMethods are kept once; a
// refund's destinationKey is capped whatever the strategy. Refusals are
// 400 parameter_invalid naming the param, and store nothing.
func TestPaymentInputsAreBounded(t *testing.T) {
	t.Parallel()
	for _, db := range payDialects {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, db.dsn(t))
			create := func(extra map[string]any) payResp {
				body := map[string]any{"amount": 10000, "paymentMethods": []string{"PIX"}, "idempotencyKey": e.key()}
				maps.Copy(body, extra)
				return e.call(http.MethodPost, "/payments", e.acct.TestKey, body)
			}
			count := func() int64 {
				r := e.call(http.MethodGet, "/payments?limit=100", e.acct.TestKey, nil)
				e.want(r, http.StatusOK, "")
				return r.num("total")
			}

			before := count()
			wantParam(t, create(map[string]any{"customerId": strings.Repeat("u", domain.MaxCustomerFieldLen+1)}),
				http.StatusBadRequest, "parameter_invalid", "customerId")
			wantParam(t, create(map[string]any{"customerId": strings.Repeat("u", 1<<19)}),
				http.StatusBadRequest, "parameter_invalid", "customerId")
			if n := count(); n != before {
				t.Errorf("refused creates stored %d payments", n-before)
			}
			e.want(create(map[string]any{"customerId": strings.Repeat("ü", domain.MaxCustomerFieldLen)}), http.StatusCreated, "")

			// 20,000 methods (120 KB of JSON) are the two named.
			many := make([]string, 0, 20000)
			for range 10000 {
				many = append(many, "CREDIT_CARD", "PIX")
			}
			r := create(map[string]any{"paymentMethods": many})
			e.want(r, http.StatusCreated, "")
			want := []any{"CREDIT_CARD", "PIX"}
			if got, _ := r.Body["paymentMethods"].([]any); !slices.Equal(got, want) {
				t.Errorf("create answered %d paymentMethods (%.60v), want %v", len(got), got, want)
			}
			g := e.call(http.MethodGet, "/payments/"+r.str("id"), e.acct.TestKey, nil)
			if got, _ := g.Body["paymentMethods"].([]any); !slices.Equal(got, want) {
				t.Errorf("read answered %d paymentMethods (%.60v), want %v", len(got), got, want)
			}
			// An unknown method is still refused, wherever it is.
			wantParam(t, create(map[string]any{"paymentMethods": append(slices.Clone(many[:10]), "PIXX")}),
				http.StatusBadRequest, "parameter_invalid", "paymentMethods")

			id := e.create(10000, "BRL", "PIX")
			e.payPix(id)
			long := strings.Repeat("k", domain.MaxRefundDestinationKeyLen+1)
			for _, strategy := range []string{"devolution", "cashout", ""} {
				body := map[string]any{"idempotencyKey": e.key(), "amount": 100, "destinationKey": long}
				if strategy != "" {
					body["strategy"] = strategy
				}
				wantParam(t, e.call(http.MethodPost, "/payments/"+id+"/refund", e.acct.TestKey, body),
					http.StatusBadRequest, "parameter_invalid", "destinationKey")
			}
			list := e.call(http.MethodGet, "/payments/"+id+"/refunds", e.acct.TestKey, nil)
			if data, _ := list.Body["data"].([]any); list.Status != http.StatusOK || len(data) != 0 {
				t.Errorf("refused refunds left %s", list.Raw)
			}
		})
	}
}
