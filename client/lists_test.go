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
