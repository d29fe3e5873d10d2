package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/quitatest"
)

func TestEventsAPI(t *testing.T) {
	t.Parallel()
	for _, d := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", testenv.SQLiteDSN}, {"postgres", testenv.PostgresDSN}} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			testEventsAPI(t, d.dsn(t))
		})
	}
}

type eventsPage struct {
	Object     string               `json:"object"`
	Data       []domain.PublicEvent `json:"data"`
	HasMore    bool                 `json:"has_more"`
	NextCursor *string              `json:"next_cursor"`
}

func listEvents(t *testing.T, srv *quitatest.Server, key, query string) eventsPage {
	t.Helper()
	r := apiCall(t, http.MethodGet, srv.BaseURL+"/events"+query, key, nil)
	wantStatus(t, r, http.StatusOK, "")
	var p eventsPage
	if err := json.Unmarshal(r.Raw, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

var chargeSeq atomic.Int64

// newTestCharge creates a Pix charge and returns its id.
func newTestCharge(t *testing.T, srv *quitatest.Server, key string, amount int64) string {
	t.Helper()
	r := testkit.Do(t, http.MethodPost, srv.BaseURL+"/charges", map[string]any{"amount": amount, "payment_method": "pix"},
		testkit.Header{"apikey": key, "Idempotency-Key": fmt.Sprintf("events-charge-%d", chargeSeq.Add(1))})
	if r.Status != http.StatusCreated {
		t.Errorf("create charge: %d %s", r.Status, r.Body)
		return ""
	}
	var c struct{ ID string }
	_ = json.Unmarshal(r.Body, &c)
	return c.ID
}

func pubIDs(evs []domain.PublicEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

func testEventsAPI(t *testing.T, dsn string) {
	srv := quitatest.NewServer(t, quitatest.Options{DatabaseURL: dsn})
	a := srv.NewAccount(t, "Loja Eventos A")
	b := srv.NewAccount(t, "Loja Eventos B")
	rc := newWHReceiver(t)

	ep := apiCall(t, http.MethodPost, srv.BaseURL+"/webhooks/endpoints", a.TestKey,
		map[string]any{"url": rc.srv.URL, "events": []string{"charge.paid", "payment.completed"}})
	wantStatus(t, ep, http.StatusCreated, "")
	rc.secret = ep.str("secret")

	ch := newTestCharge(t, srv, a.TestKey, 1500)
	wantStatus(t, apiCall(t, http.MethodPost, srv.BaseURL+"/test_helpers/charges/"+ch+"/pay", a.TestKey, nil), http.StatusOK, "")
	newTestCharge(t, srv, b.TestKey, 700)

	// Both families, newest first: created (canonical + legacy), then
	// paid (charge.paid, payment.completed, payment.status_changed).
	all := listEvents(t, srv, a.TestKey, "")
	types := make([]string, len(all.Data))
	for i, e := range all.Data {
		types[i] = string(e.Type)
		if e.Object != "event" || e.Livemode || e.Legacy != e.Type.Legacy() || !domain.ParseEventID(e.ID) {
			t.Errorf("event %+v", e)
		}
	}
	if want := []string{"payment.status_changed", "payment.completed", "charge.paid", "payment.created", "charge.created"}; !slices.Equal(types, want) {
		t.Fatalf("types %v, want %v", types, want)
	}
	if all.HasMore || all.NextCursor != nil {
		t.Errorf("one page: has_more %v next %v", all.HasMore, all.NextCursor)
	}

	// The payload is the delivered body byte for byte.
	for range 3 {
		if _, err := srv.App.Webhooks.DispatchOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := srv.App.Webhooks.DeliverOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	rc.mu.Lock()
	bodies := slices.Clone(rc.bodies)
	rc.mu.Unlock()
	if len(bodies) != 2 {
		t.Fatalf("receiver got %d deliveries, want 2", len(bodies))
	}
	paid := all.Data[2]
	one := apiCall(t, http.MethodGet, srv.BaseURL+"/events/"+paid.ID, a.TestKey, nil)
	wantStatus(t, one, http.StatusOK, "")
	var got domain.PublicEvent
	if err := json.Unmarshal(one.Raw, &got); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(bodies, func(b []byte) bool { return bytes.Equal(b, got.Payload) }) {
		t.Errorf("GET /v1/events/%s payload %s is none of the delivered bodies", paid.ID, got.Payload)
	}
	var env domain.CanonicalEnvelope
	if err := json.Unmarshal(got.Payload, &env); err != nil || env.ID != paid.ID || env.Type != domain.EventChargePaid {
		t.Errorf("canonical payload %s (err %v)", got.Payload, err)
	}

	// Filters.
	if p := listEvents(t, srv, a.TestKey, "?type=charge.*"); !slices.Equal(pubIDs(p.Data), []string{all.Data[2].ID, all.Data[4].ID}) {
		t.Errorf("type=charge.*: %v", pubIDs(p.Data))
	}
	if p := listEvents(t, srv, a.TestKey, "?type=payment.created,charge.paid"); !slices.Equal(pubIDs(p.Data), []string{all.Data[2].ID, all.Data[3].ID}) {
		t.Errorf("type list: %v", pubIDs(p.Data))
	}
	created := time.Time(all.Data[2].CreatedAt).Format(time.RFC3339Nano)
	if p := listEvents(t, srv, a.TestKey, "?created_after="+created); len(p.Data) != 3 {
		t.Errorf("created_after the payment: %v", pubIDs(p.Data))
	}
	if p := listEvents(t, srv, a.TestKey, "?limit=2"); !p.HasMore || p.NextCursor == nil || *p.NextCursor != all.Data[1].ID {
		t.Errorf("limit=2: %+v", p)
	} else if p2 := listEvents(t, srv, a.TestKey, "?limit=2&starting_after="+*p.NextCursor); !slices.Equal(pubIDs(p2.Data), pubIDs(all.Data[2:4])) {
		t.Errorf("second page %v", pubIDs(p2.Data))
	}
	// ending_before: the events just after the cursor; next_cursor goes on
	// in that direction.
	p := listEvents(t, srv, a.TestKey, "?limit=2&ending_before="+all.Data[4].ID)
	if !slices.Equal(pubIDs(p.Data), pubIDs(all.Data[2:4])) || !p.HasMore || p.NextCursor == nil || *p.NextCursor != all.Data[2].ID {
		t.Errorf("ending_before page %+v", p)
	}

	// Bad input names the parameter.
	for q, param := range map[string]string{
		"?type=charge.bogus":        "type",
		"?type=*":                   "type",
		"?limit=0":                  "limit",
		"?starting_after=ch_x":      "starting_after",
		"?ending_before=evt_nope":   "ending_before",
		"?wait=26":                  "wait",
		"?wait=-1":                  "wait",
		"?created_before=yesterday": "created_before",
		"?offset=5":                 "offset",
		"?starting_after=" + paid.ID + "&ending_before=" + paid.ID: "ending_before",
	} {
		r := apiCall(t, http.MethodGet, srv.BaseURL+"/events"+q, a.TestKey, nil)
		if r.Status != http.StatusBadRequest || r.param() != param {
			t.Errorf("%s: %d param %q, want 400 %q: %s", q, r.Status, r.param(), param, r.Raw)
		}
	}

	// Isolation: account B and A's live key see none of A's test events.
	bAll := listEvents(t, srv, b.TestKey, "")
	if len(bAll.Data) != 2 || slices.ContainsFunc(bAll.Data, func(e domain.PublicEvent) bool { return slices.Contains(pubIDs(all.Data), e.ID) }) {
		t.Errorf("B's list: %v", pubIDs(bAll.Data))
	}
	for _, key := range []string{b.TestKey, b.LiveKey, a.LiveKey} {
		wantStatus(t, apiCall(t, http.MethodGet, srv.BaseURL+"/events/"+paid.ID, key, nil), http.StatusNotFound, "resource_not_found")
		r := apiCall(t, http.MethodGet, srv.BaseURL+"/events?starting_after="+paid.ID, key, nil)
		if r.Status != http.StatusBadRequest || r.param() != "starting_after" {
			t.Errorf("another scope's cursor: %d %s", r.Status, r.Raw)
		}
	}
	if p := listEvents(t, srv, a.LiveKey, ""); len(p.Data) != 0 {
		t.Errorf("live key sees test events: %v", pubIDs(p.Data))
	}
	wantStatus(t, apiCall(t, http.MethodGet, srv.BaseURL+"/events/evt_nope", a.TestKey, nil), http.StatusNotFound, "resource_not_found")
	wantStatus(t, apiCall(t, http.MethodGet, srv.BaseURL+"/events", "", nil), http.StatusUnauthorized, "")

	// Long-poll: an empty page waits for the next event and answers as
	// soon as it is written.
	newest := all.Data[0].ID
	go func() {
		time.Sleep(300 * time.Millisecond)
		newTestCharge(t, srv, a.TestKey, 900)
	}()
	start := time.Now()
	p = listEvents(t, srv, a.TestKey, "?type=charge.created&ending_before="+newest+"&wait=10s")
	if took := time.Since(start); len(p.Data) != 1 || p.Data[0].Type != domain.EventChargeCreated || took < 250*time.Millisecond || took > 5*time.Second {
		t.Errorf("long-poll answered %v after %v", pubIDs(p.Data), took)
	}
	start = time.Now()
	if p := listEvents(t, srv, a.TestKey, "?ending_before="+all.Data[0].ID+"&type=charge.expired&wait=1"); len(p.Data) != 0 || time.Since(start) < time.Second {
		t.Errorf("long-poll without events: %v after %v", pubIDs(p.Data), time.Since(start))
	}

	// 30 days on, the events are gone from the API, and housekeeping
	// deletes them once they are fanned out.
	srv.Clock.(*quitatest.Clock).Advance(30*24*time.Hour + time.Minute)
	wantStatus(t, apiCall(t, http.MethodGet, srv.BaseURL+"/events/"+paid.ID, a.TestKey, nil), http.StatusNotFound, "resource_not_found")
	if p := listEvents(t, srv, a.TestKey, ""); len(p.Data) != 0 {
		t.Errorf("events past 30 days listed: %v", pubIDs(p.Data))
	}
	if _, err := srv.App.Webhooks.DispatchOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	n, err := srv.App.Events.Prune(t.Context())
	if err != nil || n != 9 {
		t.Errorf("Prune deleted %d (err %v), want A's 7 and B's 2", n, err)
	}
}

// Lists mask documents (docs/decisions.md): the events list and the
// deliveries list show a locked charge's expected_payer_tax_id and the
// customer's document by their last two characters; GET /v1/events/{id}
// returns the envelope exactly as delivered.
func TestEventAndDeliveryListsMaskDocuments(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{DatabaseURL: testenv.SQLiteDSN(t)})
	a := srv.NewAccount(t, "Loja Documentos")
	rc := newWHReceiver(t)
	ep := apiCall(t, http.MethodPost, srv.BaseURL+"/webhooks/endpoints", a.TestKey,
		map[string]any{"url": rc.srv.URL, "events": []string{"charge.created"}})
	wantStatus(t, ep, http.StatusCreated, "")
	r := testkit.Do(t, http.MethodPost, srv.BaseURL+"/charges", map[string]any{"amount": 1990, "payment_method": "pix",
		"customer":              map[string]any{"name": "Maria Silva", "document": "52998224725"},
		"expected_payer_tax_id": "529.982.247-25"},
		testkit.Header{"apikey": a.TestKey, "Idempotency-Key": "mask-documents-1"})
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	srv.RunWorkers(t)
	leaks := func(what string, body []byte) {
		t.Helper()
		for _, doc := range []string{"52998224725", "529.982.247-25", "11144477735"} {
			if bytes.Contains(body, []byte(doc)) {
				t.Errorf("%s shows the document %s", what, doc)
			}
		}
	}
	list := apiCall(t, http.MethodGet, srv.BaseURL+"/events?type=charge.created", a.TestKey, nil)
	wantStatus(t, list, http.StatusOK, "")
	leaks("GET /v1/events", list.Raw)
	if !bytes.Contains(list.Raw, []byte(`"expected_payer_tax_id":"*********25"`)) {
		t.Errorf("GET /v1/events: no masked expected_payer_tax_id in %s", list.Raw)
	}
	var page eventsPage
	if err := json.Unmarshal(list.Raw, &page); err != nil || len(page.Data) != 1 {
		t.Fatalf("events page: %v, %d events", err, len(page.Data))
	}
	one := apiCall(t, http.MethodGet, srv.BaseURL+"/events/"+page.Data[0].ID, a.TestKey, nil)
	wantStatus(t, one, http.StatusOK, "")
	if !bytes.Contains(one.Raw, []byte("52998224725")) && !bytes.Contains(one.Raw, []byte("529.982.247-25")) {
		t.Errorf("GET /v1/events/{id} is not the envelope as delivered: %s", one.Raw)
	}
	deliveries := apiCall(t, http.MethodGet, srv.BaseURL+"/webhooks/deliveries", a.TestKey, nil)
	wantStatus(t, deliveries, http.StatusOK, "")
	if !bytes.Contains(deliveries.Raw, []byte("*********25")) {
		t.Errorf("GET /v1/webhooks/deliveries: no masked document in %s", deliveries.Raw)
	}
	leaks("GET /v1/webhooks/deliveries", deliveries.Raw)
}

// Security item 23: the type filter of GET /v1/events takes at most as
// many entries as the catalog has types; every catalog type named once
// is accepted, a longer list (it must repeat a type) is a 400 naming type.
func TestEventTypeFilterIsBounded(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	acct := srv.NewAccount(t, "Loja Eventos")
	newTestCharge(t, srv, acct.TestKey, 1000)

	all := make([]string, len(domain.EventCatalog))
	for i, d := range domain.EventCatalog {
		all[i] = string(d.Event)
	}
	p := listEvents(t, srv, acct.TestKey, "?type="+strings.Join(all, ","))
	if len(p.Data) == 0 {
		t.Errorf("every type named: no events")
	}
	if p := listEvents(t, srv, acct.TestKey, "?type=charge.*,charge.created,charge.*"); len(p.Data) != 1 || p.Data[0].Type != domain.EventChargeCreated {
		t.Errorf("repeated entries: %+v", p.Data)
	}
	for _, n := range []int{len(domain.EventCatalog) + 1, 7000} {
		q := strings.TrimSuffix(strings.Repeat("charge.*,", n), ",")
		r := apiCall(t, http.MethodGet, srv.BaseURL+"/events?wait=1&type="+q, acct.TestKey, nil)
		wantParam(t, r, http.StatusBadRequest, "parameter_invalid", "type")
	}
	all = append(all, "charge.*")
	wantParam(t, apiCall(t, http.MethodGet, srv.BaseURL+"/events?type="+strings.Join(all, ","), acct.TestKey, nil),
		http.StatusBadRequest, "parameter_invalid", "type")
}

// The events API answers each event as the object its webhook delivers:
// every member of the delivered body — api_version and data of a
// canonical envelope, event and data of a legacy one — at the top level,
// byte for byte, with the API's id, object, type, legacy, livemode,
// created_at and payload (the body whole) beside them; a list item
// likewise, from its masked payload.
func TestEventsAnswerTheDeliveredEnvelope(t *testing.T) {
	t.Parallel()
	for _, d := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", testenv.SQLiteDSN}, {"postgres", testenv.PostgresDSN}} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			testEventsAnswerTheDeliveredEnvelope(t, d.dsn(t))
		})
	}
}

func testEventsAnswerTheDeliveredEnvelope(t *testing.T, dsn string) {
	srv := quitatest.NewServer(t, quitatest.Options{DatabaseURL: dsn})
	a := srv.NewAccount(t, "Loja Envelopes")
	rc := newWHReceiver(t)
	every := make([]string, len(domain.EventCatalog))
	for i, d := range domain.EventCatalog {
		every[i] = string(d.Event)
	}
	ep := apiCall(t, http.MethodPost, srv.BaseURL+"/webhooks/endpoints", a.TestKey, map[string]any{"url": rc.srv.URL, "events": every})
	wantStatus(t, ep, http.StatusCreated, "")
	rc.secret = ep.str("secret")

	paid := newTestCharge(t, srv, a.TestKey, 1500)
	wantStatus(t, apiCall(t, http.MethodPost, srv.BaseURL+"/test_helpers/charges/"+paid+"/pay", a.TestKey, nil), http.StatusOK, "")
	wantStatus(t, apiCall(t, http.MethodPost, srv.BaseURL+"/payments/"+newTestCharge(t, srv, a.TestKey, 700)+"/cancel", a.TestKey, nil), http.StatusOK, "")
	wantStatus(t, apiCall(t, http.MethodPost, srv.BaseURL+"/test_helpers/charges/"+newTestCharge(t, srv, a.TestKey, 900)+"/expire", a.TestKey, nil), http.StatusOK, "")
	srv.RunWorkers(t)

	rc.mu.Lock()
	bodies := slices.Clone(rc.bodies)
	rc.mu.Unlock()
	members := func(what string, raw []byte) map[string]json.RawMessage {
		t.Helper()
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s: %v: %s", what, err, raw)
		}
		return m
	}
	// sameMembers checks that every member of body is in got, byte for
	// byte, and that got adds the API's own.
	sameMembers := func(what string, got map[string]json.RawMessage, body []byte, ev domain.PublicEvent) {
		t.Helper()
		for k, v := range members(what+" payload", body) {
			if !bytes.Equal(got[k], v) {
				t.Errorf("%s (%s): %q is %s, the delivered body's is %s", what, ev.Type, k, got[k], v)
			}
		}
		for k, want := range map[string]string{"id": `"` + ev.ID + `"`, "object": `"event"`, "type": `"` + string(ev.Type) + `"`,
			"legacy": fmt.Sprint(ev.Type.Legacy()), "livemode": "false"} {
			if string(got[k]) != want {
				t.Errorf("%s (%s): %q is %s, want %s", what, ev.Type, k, got[k], want)
			}
		}
		if got["created_at"] == nil || !bytes.Equal(got["payload"], body) {
			t.Errorf("%s (%s): created_at %s, payload %s", what, ev.Type, got["created_at"], got["payload"])
		}
	}

	all := listEvents(t, srv, a.TestKey, "?limit=100")
	seen := map[domain.EventType]bool{}
	for _, ev := range all.Data {
		seen[ev.Type] = true
		one := apiCall(t, http.MethodGet, srv.BaseURL+"/events/"+ev.ID, a.TestKey, nil)
		wantStatus(t, one, http.StatusOK, "")
		got := members("GET /v1/events/"+ev.ID, one.Raw)
		i := slices.IndexFunc(bodies, func(b []byte) bool { return bytes.Equal(b, got["payload"]) })
		if i < 0 {
			t.Errorf("GET /v1/events/%s (%s): payload %s is none of the %d delivered bodies", ev.ID, ev.Type, got["payload"], len(bodies))
			continue
		}
		sameMembers("GET /v1/events/"+ev.ID, got, bodies[i], ev)
		if !ev.Type.Legacy() && string(got["api_version"]) != `"`+domain.APIVersion+`"` {
			t.Errorf("GET /v1/events/%s (%s): api_version %s", ev.ID, ev.Type, got["api_version"])
		}
	}
	for _, want := range []domain.EventType{domain.EventChargeCreated, domain.EventPaymentCreated, domain.EventChargePaid,
		domain.EventPaymentCompleted, domain.EventPaymentStatusChanged, domain.EventChargeFailed, domain.EventPaymentFailed,
		domain.EventChargeExpired, domain.EventPaymentExpired} {
		if !seen[want] {
			t.Errorf("no %s event listed: %v", want, pubIDs(all.Data))
		}
	}

	// A list item is its masked payload's members with the API's.
	list := apiCall(t, http.MethodGet, srv.BaseURL+"/events?limit=100", a.TestKey, nil)
	wantStatus(t, list, http.StatusOK, "")
	var page struct{ Data []json.RawMessage }
	if err := json.Unmarshal(list.Raw, &page); err != nil || len(page.Data) != len(all.Data) {
		t.Fatalf("events page: %v, %d events", err, len(page.Data))
	}
	for i, raw := range page.Data {
		got := members("GET /v1/events item", raw)
		sameMembers("GET /v1/events item", got, got["payload"], all.Data[i])
	}
}
