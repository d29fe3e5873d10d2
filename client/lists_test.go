package client

import (
	"context"
	"fmt"
	"net/http"
	"testing"
)

func payment(id string) string {
	return fmt.Sprintf(`{"id":%q,"status":"PAID","amount":1,"currency":"BRL","paymentMethods":["PIX"],"metadata":{},"createdAt":"2026-11-24T12:00:00.000Z"}`, id)
}

// A payment created during a newest-first walk shifts the later pages: the
// iterator yields the shifted one once, asks for each page in turn, and
// stops at the total.
func TestPaymentsListSkipsShiftedItems(t *testing.T) {
	t.Parallel()
	s := &script{steps: []func(http.ResponseWriter){
		answer(200, "", `{"data":[`+payment("tx_5")+`,`+payment("tx_4")+`],"total":5,"page":1,"limit":2}`),
		// tx_6 was created meanwhile: tx_4 moved to page 2.
		answer(200, "", `{"data":[`+payment("tx_4")+`,`+payment("tx_3")+`],"total":6,"page":2,"limit":2}`),
		answer(200, "", `{"data":[`+payment("tx_2")+`,`+payment("tx_1")+`],"total":6,"page":3,"limit":2}`),
	}}
	c, _ := testClient(t, s)
	var ids []string
	for p, err := range c.Payments.List(context.Background(), PaymentListParams{Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	if fmt.Sprint(ids) != "[tx_5 tx_4 tx_3 tx_2 tx_1]" || s.attempts() != 3 {
		t.Fatalf("yielded %v in %d requests", ids, s.attempts())
	}
	for i, r := range s.seen {
		if got := r.URL.Query().Get("page"); got != fmt.Sprint(i+1) {
			t.Fatalf("request %d asked page %s", i, got)
		}
	}
}

// An events page may be empty and still have more (its filter matched none
// of the rows the server examined): the iterator follows its cursor.
func TestEventsListFollowsEmptyPages(t *testing.T) {
	t.Parallel()
	ev := func(id string) string {
		return fmt.Sprintf(`{"id":%q,"object":"event","type":"charge.refunded","legacy":false,"livemode":false,`+
			`"created_at":"2026-11-24T12:00:00.000Z","payload":{"id":%q,"type":"charge.refunded"}}`, id, id)
	}
	s := &script{steps: []func(http.ResponseWriter){
		answer(200, "", `{"object":"list","data":[],"has_more":true,"next_cursor":"evt_edge1"}`),
		answer(200, "", `{"object":"list","data":[`+ev("evt_2")+`],"has_more":true,"next_cursor":"evt_edge2"}`),
		answer(200, "", `{"object":"list","data":[],"has_more":false,"next_cursor":null}`),
	}}
	c, _ := testClient(t, s)
	var ids []string
	for e, err := range c.Events.List(context.Background(), EventListParams{Limit: 10, Types: []string{"charge.refunded"}}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	if fmt.Sprint(ids) != "[evt_2]" || s.attempts() != 3 {
		t.Fatalf("yielded %v in %d requests", ids, s.attempts())
	}
	if got := s.seen[1].URL.Query().Get("starting_after"); got != "evt_edge1" {
		t.Errorf("second page asked after %q", got)
	}
}
