package client

import (
	"encoding/json"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/quitapix/quita/api"
)

// sdkOp is one call of the SDK: its route, the Go types of its request
// body and answer, and the query parameters it may send.
type sdkOp struct {
	method, path string
	body, answer any
	query        url.Values
	// answerItems: the answer is {data: [answer]} or [answer].
	answerItems bool
	// also names component schemas the answer type serves as well (one Go
	// type for the create and read formats): its fields may come from
	// any of them.
	also []string
}

func allQuery(keys ...string) url.Values {
	q := url.Values{}
	for _, k := range keys {
		q.Set(k, "x")
	}
	return q
}

// The SDK's types and the OpenAPI document (api/openapi.yaml, which the
// e2e suite holds the server to) name the same fields, both ways, for
// every call the SDK makes: a field the document gains or renames fails
// here until the SDK follows.
func TestTypesMatchTheOpenAPIDocument(t *testing.T) {
	t.Parallel()
	doc, err := openapi3.NewLoader().LoadFromData(api.YAML)
	if err != nil {
		t.Fatal(err)
	}
	every := time.Now()
	ops := []sdkOp{
		{method: "POST", path: "/charges", body: ChargeParams{}, answer: Charge{}},
		{method: "GET", path: "/charges", answer: ChargeList{}, query: ChargeListParams{Limit: 1, StartingAfter: "x", Status: "x", CreatedAfter: every, CreatedBefore: every, CustomerID: "x"}.query()},
		{method: "GET", path: "/charges/{id}", answer: Charge{}, query: allQuery("include")},
		{method: "POST", path: "/charges/{id}", body: ChargeUpdateParams{}, answer: Charge{}},
		{method: "POST", path: "/charges/batch", body: ChargeBatchParams{}, answer: ChargeBatch{}},
		{method: "GET", path: "/charges/batch/{id}", answer: ChargeBatch{}},
		{method: "POST", path: "/test_helpers/charges/{id}/pay", body: PayParams{}, answer: Charge{}},
		{method: "POST", path: "/test_helpers/charges/{id}/expire", answer: Charge{}},
		{method: "POST", path: "/payments", body: PaymentParams{}, answer: Payment{}, also: []string{"Transaction"}},
		{method: "GET", path: "/payments", answer: PaymentList{}, also: []string{"TransactionCreated"}, query: PaymentListParams{Page: 1, Limit: 1, Status: "x", StartDate: every, EndDate: every, SortBy: "x", SortOrder: "x"}.query()},
		{method: "GET", path: "/payments/{id}", answer: Payment{}, also: []string{"TransactionCreated"}},
		{method: "GET", path: "/payments/stats", answer: Stats{}, query: daysQuery(1, "")},
		{method: "GET", path: "/payments/metrics", answer: Metrics{}, query: daysQuery(1, "BRL")},
		{method: "POST", path: "/payments/{id}/cancel", answer: Payment{}, also: []string{"TransactionCreated"}},
		{method: "POST", path: "/payments/{id}/refund", body: RefundParams{}, answer: Refund{}},
		{method: "GET", path: "/payments/{id}/refunds", answer: Refund{}, answerItems: true},
		{method: "GET", path: "/payments/{id}/receipt", answer: Receipt{}},
		{method: "GET", path: "/payments/{id}/provider-status", answer: ProviderStatus{}},
		{method: "POST", path: "/payments/{id}/resend-webhook", answer: ResendResult{}},
		{method: "POST", path: "/test_helpers/payments/{id}/transition", body: struct {
			Status   string `json:"status"`
			PaidWith string `json:"paidWith"`
		}{}, answer: Payment{}, also: []string{"TransactionCreated"}},
		{method: "POST", path: "/test_helpers/refunds/{id}/fail", answer: Refund{}},
		{method: "GET", path: "/wallets", answer: Wallet{}, answerItems: true},
		{method: "GET", path: "/wallets/balance", answer: Balance{}, query: allQuery("currency")},
		{method: "POST", path: "/webhooks/endpoints", body: EndpointParams{}, answer: WebhookEndpoint{}},
		{method: "GET", path: "/webhooks/endpoints", answer: WebhookEndpoint{}, answerItems: true, also: []string{"WebhookEndpointWithSecret"}},
		{method: "PATCH", path: "/webhooks/endpoints/{id}", body: EndpointUpdate{}, answer: WebhookEndpoint{}, also: []string{"WebhookEndpointWithSecret"}},
		{method: "POST", path: "/webhooks/endpoints/{id}/rotate-secret", body: struct {
			ID string `json:"id"`
		}{}, answer: struct {
			ID     string `json:"id"`
			Secret string `json:"secret"`
		}{}},
		{method: "POST", path: "/webhooks/transaction-secret/rotate", answer: struct {
			Secret string `json:"transactionWebhookSecret"`
		}{}},
		{method: "GET", path: "/webhooks/event-catalog", answer: EventDefinition{}, answerItems: true},
		{method: "GET", path: "/webhooks/deliveries", answer: DeliveryList{}, query: DeliveryListParams{Status: "x", EventType: "x", EndpointID: "x", Limit: 1, Offset: 1}.query()},
		{method: "GET", path: "/webhooks/stats", answer: DeliveryStats{}},
		{method: "GET", path: "/events", answer: eventItem{}, answerItems: true, query: EventListParams{Limit: 1, StartingAfter: "x", EndingBefore: "x", Types: []string{"x"}, CreatedAfter: every, CreatedBefore: every, Wait: time.Second}.query()},
		{method: "GET", path: "/events/{id}", answer: eventItem{}},
		{method: "POST", path: "/payouts", body: PayoutParams{}, answer: Payout{}},
		{method: "GET", path: "/payouts", answer: PayoutList{}, query: PayoutListParams{Limit: 1, StartingAfter: "x", Status: "x"}.query()},
		{method: "GET", path: "/payouts/{id}", answer: Payout{}},
		{method: "POST", path: "/payouts/{id}/cancel", answer: Payout{}},
		{method: "GET", path: "/payouts/{id}/receipt", answer: Receipt{}, query: allQuery("lang")},
		{method: "POST", path: "/test_helpers/payouts/{id}/pay", answer: Payout{}},
		{method: "POST", path: "/test_helpers/payouts/{id}/fail", body: struct {
			FailureCode string `json:"failure_code"`
		}{}, answer: Payout{}},
		{method: "POST", path: "/subaccounts", body: SubaccountParams{}, answer: Subaccount{}},
		{method: "GET", path: "/subaccounts", answer: SubaccountList{}, query: SubaccountListParams{Limit: 1, StartingAfter: "x"}.query()},
		{method: "GET", path: "/subaccounts/{id}", answer: Subaccount{}},
		{method: "POST", path: "/subaccounts/{id}", body: SubaccountUpdate{}, answer: Subaccount{}},
		{method: "POST", path: "/subaccounts/{id}/disable", answer: Subaccount{}},
		{method: "POST", path: "/transfers", body: TransferParams{}, answer: Transfer{}},
		{method: "GET", path: "/transfers", answer: TransferList{}, query: TransferListParams{Limit: 1, StartingAfter: "x"}.query()},
		{method: "GET", path: "/transfers/{id}", answer: Transfer{}},
		{method: "POST", path: "/subscriptions", body: SubscriptionParams{}, answer: Subscription{}},
		{method: "GET", path: "/subscriptions", answer: SubscriptionList{}, query: SubscriptionListParams{Limit: 1, StartingAfter: "x", Status: "x"}.query()},
		{method: "GET", path: "/subscriptions/{id}", answer: Subscription{}, query: allQuery("include")},
		{method: "POST", path: "/subscriptions/{id}/cancel", answer: Subscription{}},
		{method: "GET", path: "/subscriptions/{id}/charges", answer: ChargeList{}, query: SubscriptionChargeListParams{Limit: 1, StartingAfter: "x"}.query()},
		{method: "POST", path: "/subscriptions/{id}/charges", body: struct {
			Amount int64 `json:"amount"`
		}{}, answer: Subscription{}},
		{method: "POST", path: "/test_helpers/subscriptions/{id}/authorize", answer: Subscription{}},
		{method: "POST", path: "/test_helpers/subscriptions/{id}/reject", answer: Subscription{}},
		{method: "POST", path: "/test_helpers/subscriptions/{id}/revoke", answer: Subscription{}},
		{method: "POST", path: "/test_helpers/subscriptions/{id}/advance", body: AdvanceParams{}, answer: Subscription{}},
		{method: "POST", path: "/auth/login", body: struct {
			Email    string `json:"email"`
			Password string `json:"password"`
			Code     string `json:"code"`
		}{}, answer: Session{}},
		{method: "POST", path: "/api-keys", body: KeyParams{}, answer: IssuedKey{}},
		{method: "GET", path: "/api-keys", answer: APIKey{}, answerItems: true},
		{method: "GET", path: "/audit-logs", answer: AuditEntry{}, answerItems: true, query: limitQuery(1)},
		{method: "GET", path: "/request-logs", answer: RequestLogEntry{}, answerItems: true, query: allQuery("limit", "apiKeyFingerprint")},
		{method: "POST", path: "/api-keys/{id}/rotate", body: struct {
			Label string `json:"label"`
			Code  string `json:"code"`
		}{}, answer: IssuedKey{}},
	}
	for _, op := range ops {
		t.Run(op.method+" "+op.path, func(t *testing.T) {
			item := doc.Paths.Find(op.path)
			if item == nil {
				t.Fatalf("the document has no %s", op.path)
			}
			o := item.GetOperation(op.method)
			if o == nil {
				t.Fatalf("the document has no %s %s", op.method, op.path)
			}
			var documented []string
			for _, p := range append(item.Parameters, o.Parameters...) {
				if p.Value.In == "query" {
					documented = append(documented, p.Value.Name)
				}
			}
			for k := range op.query {
				if !slices.Contains(documented, k) {
					t.Errorf("the SDK sends query %q; documented: %v", k, documented)
				}
			}
			if op.body != nil {
				if o.RequestBody == nil {
					t.Fatal("the SDK sends a body the document does not take")
				}
				compareShape(t, "request", reflect.TypeOf(op.body), []*openapi3.Schema{o.RequestBody.Value.Content.Get("application/json").Schema.Value})
			}
			var answers []*openapi3.Schema
			for code, r := range o.Responses.Map() {
				if strings.HasPrefix(code, "2") && r.Value.Content.Get("application/json") != nil {
					answers = append(answers, alternatives(r.Value.Content.Get("application/json").Schema.Value)...)
				}
			}
			if op.answerItems {
				var items []*openapi3.Schema
				for _, a := range answers {
					if d := a.Properties["data"]; d != nil {
						a = d.Value
					}
					if a.Items != nil {
						items = append(items, alternatives(a.Items.Value)...)
					}
				}
				answers = items
			}
			if len(answers) == 0 {
				t.Fatal("the document gives no JSON answer")
			}
			var extra []*openapi3.Schema
			for _, name := range op.also {
				extra = append(extra, doc.Components.Schemas[name].Value)
			}
			compareShapeAlso(t, "answer", reflect.TypeOf(op.answer), answers, extra)
		})
	}

	// The webhook envelopes: canonical and legacy.
	compareShape(t, "canonical event", reflect.TypeOf(Event{}), []*openapi3.Schema{doc.Components.Schemas["CanonicalEvent"].Value})
	compareShape(t, "legacy event data", reflect.TypeOf(LegacyData{}), []*openapi3.Schema{doc.Components.Schemas["LegacyEvent"].Value.Properties["data"].Value})
}

// alternatives are the object schemas a schema may be (anyOf/oneOf
// branches other than null, allOf merged). Branches that only add
// constraints (required) are not alternatives.
func alternatives(s *openapi3.Schema) []*openapi3.Schema {
	var out []*openapi3.Schema
	shapes := false
	for _, group := range []openapi3.SchemaRefs{s.AnyOf, s.OneOf} {
		for _, b := range group {
			if b.Value.Type.Is("null") {
				continue
			}
			for _, alt := range alternatives(b.Value) {
				shapes = shapes || len(alt.Properties) > 0 || alt.Items != nil || alt.Type != nil
				out = append(out, alt)
			}
		}
	}
	if shapes {
		return out
	}
	if len(s.AllOf) > 0 {
		merged := &openapi3.Schema{Properties: openapi3.Schemas{}}
		for _, part := range s.AllOf {
			for _, alt := range alternatives(part.Value) {
				for k, v := range alt.Properties {
					merged.Properties[k] = v
				}
			}
		}
		for k, v := range s.Properties {
			merged.Properties[k] = v
		}
		return []*openapi3.Schema{merged}
	}
	return []*openapi3.Schema{s}
}

// jsonFields maps the JSON names of a struct's fields to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

var leafTypes = []reflect.Type{reflect.TypeFor[time.Time](), reflect.TypeFor[json.RawMessage](), reflect.TypeFor[json.Number]()}

// compareShape checks that struct type t has exactly the properties of the
// union of schemas, and that each schema's properties are all in t; it
// descends into nested structs.
func compareShape(t *testing.T, where string, typ reflect.Type, schemas []*openapi3.Schema) {
	t.Helper()
	compareShapeAlso(t, where, typ, schemas, nil)
}

// compareShapeAlso is compareShape where the fields of t may also come
// from the schemas of also (at any depth where the names match).
func compareShapeAlso(t *testing.T, where string, typ reflect.Type, schemas, also []*openapi3.Schema) {
	t.Helper()
	for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct || slices.Contains(leafTypes, typ) {
		return
	}
	fields := jsonFields(typ)
	union := map[string][]*openapi3.Schema{}
	for _, s := range also {
		for _, alt := range alternatives(s) {
			for name, p := range alt.Properties {
				union[name] = append(union[name], p.Value)
			}
		}
	}
	for _, s := range schemas {
		for _, alt := range alternatives(s) {
			for name, p := range alt.Properties {
				union[name] = append(union[name], p.Value)
			}
			for name := range alt.Properties {
				if _, ok := fields[name]; !ok {
					t.Errorf("%s %s: the document has %q, the SDK does not", where, typ.Name(), name)
				}
			}
		}
	}
	var names []string
	for name := range fields {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		props, ok := union[name]
		if !ok {
			t.Errorf("%s %s: the SDK has %q, the document does not", where, typ.Name(), name)
			continue
		}
		var nested []*openapi3.Schema
		for _, p := range props {
			for _, alt := range alternatives(p) {
				if alt.Items != nil {
					alt = alt.Items.Value
				}
				nested = append(nested, alternatives(alt)...)
			}
		}
		compareShapeAlso(t, where+"."+name, fields[name], nested, also)
	}
}
