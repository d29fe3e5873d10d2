package bcbpix_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

// batchCPF is the n-th of a run of valid CPFs.
func batchCPF(n int) string {
	d := []byte(fmt.Sprintf("%09d", 300_000_000+n))
	for _, size := range []int{9, 10} {
		sum := 0
		for i := range size {
			sum += int(d[i]-'0') * (size + 1 - i)
		}
		d = append(d, byte('0'+sum*10%11%10))
	}
	return string(d)
}

// A live batch of due-date charges goes to the PSP as one lotecobv: one
// PUT /lotecobv/{id} for the whole batch and not one PUT /cobv/{txid};
// each item's charge then reads its cobv (GET /cobv/{txid}) and carries
// the cobv's BR Code; a charge of the batch is paid through the PSP like
// any due-date charge. On Postgres: a thousand live creates commit in
// group there, where SQLite commits (and syncs) them one at a time.
func TestLiveBatchGoesThroughLoteCobV(t *testing.T) {
	t.Parallel()
	w := newWorld(t, backends[1].dsn(t))
	brasilia, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	due := bizdays.NextBusinessDay(bizdays.DateOf(time.Now().In(brasilia)).AddDays(10))
	const n = domain.MaxBatchCharges
	items := make([]any, n)
	for i := range items {
		items[i] = map[string]any{"amount": 5000 + i, "payment_method": "pix",
			"customer": map[string]any{"name": fmt.Sprintf("Cliente %d", i), "document": batchCPF(i)},
			"due_date": due.String(), "interest": map[string]any{"type": "percent_per_month", "rate": "1.00"}}
	}
	code, raw := w.do(t, w.acct.LiveKey, http.MethodPost, "/charges/batch", map[string]any{"charges": items}, newIdem())
	var b struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal(raw, &b); err != nil || code != http.StatusAccepted {
		t.Fatalf("batch create: %d %.300s", code, raw)
	}
	type item struct {
		Status string `json:"status"`
		Charge *struct {
			ID  string `json:"id"`
			Pix struct {
				BRCode string `json:"br_code"`
				TxID   string `json:"txid"`
			} `json:"pix"`
		} `json:"charge"`
		Error any `json:"error"`
	}
	var got struct {
		Status           string `json:"status"`
		Created, Refused int
		Items            []item `json:"items"`
	}
	deadline := time.Now().Add(3 * time.Minute)
	for got.Status != "completed" {
		if time.Now().After(deadline) {
			t.Fatalf("batch not completed: %d created, %d refused", got.Created, got.Refused)
		}
		time.Sleep(50 * time.Millisecond)
		code, raw := w.do(t, w.acct.LiveKey, http.MethodGet, "/charges/batch/"+b.ID, nil, "")
		if err := json.Unmarshal(raw, &got); err != nil || code != http.StatusOK {
			t.Fatalf("batch read: %d %.300s", code, raw)
		}
	}
	if got.Created != n || got.Refused != 0 {
		t.Fatalf("completed with %d created and %d refused, want %d created", got.Created, got.Refused, n)
	}
	if puts := w.sim.OperationHits("PUT /lotecobv/{id}"); puts != 1 {
		t.Errorf("the PSP saw %d lotecobv PUTs, want 1", puts)
	}
	if puts := w.sim.OperationHits("PUT /cobv/{txid}"); puts != 0 {
		t.Errorf("the PSP saw %d cobv PUTs, want none: the lote opened them", puts)
	}
	if gets := w.sim.OperationHits("GET /cobv/{txid}"); gets != n {
		t.Errorf("the PSP saw %d cobv GETs, want one per charge (%d)", gets, n)
	}
	txids := map[string]bool{}
	for i, it := range got.Items {
		c := it.Charge
		if it.Status != "created" || c == nil {
			t.Fatalf("item %d: %+v", i, it)
		}
		cob, ok := w.sim.CobVByTxID(c.Pix.TxID)
		if !ok || cob.Status != pixsim.CobActive || cob.PixCopiaECola != c.Pix.BRCode || cob.Devedor.CPF != batchCPF(i) ||
			cob.Valor.Original != fmt.Sprintf("%d.%02d", (5000+i)/100, (5000+i)%100) {
			t.Fatalf("item %d's cobv at the PSP %+v, for charge %+v", i, cob, c)
		}
		txids[c.Pix.TxID] = true
	}
	if len(txids) != n {
		t.Errorf("%d distinct txids for %d charges", len(txids), n)
	}
	first := got.Items[0].Charge
	if p := w.pay(t, pixsim.PayRequest{TxID: first.Pix.TxID, PayerTaxID: batchCPF(0), Date: due.String()}); p.Valor != "50.00" {
		t.Fatalf("paid %s on the due date, want 50.00", p.Valor)
	}
	if c := w.get(t, first.ID); c.Status != "paid" {
		t.Errorf("after the PSP's callback the batch's charge is %s", c.Status)
	}
}
