package bcbpix_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/ports"
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

// The adapter's lote: OpenDueDateBatch PUTs one lotecobv (asking again
// with the same cobvs is taken, and names the same lote);
// DueDateBatchStatus reads each cobv as opened or refused with the PSP's
// problem (a due date the PSP finds past); a create of an opened cobv
// reads it (GET, no PUT) and carries its BR Code; a batch the PSP never
// received is not found; a lote without cobvs is refused before any call.
func TestOpenDueDateBatchAsLoteCobV(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	sim, psp := startPSP(t, pki)
	a, _ := newAdapter(t, pki, psp.URL, acct)
	ctx := context.Background()
	brasilia, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	today := bizdays.DateOf(time.Now().In(brasilia))
	terms := func(created, due bizdays.Date) *domain.DueTerms {
		dt, err := domain.NewDueTerms(domain.DueTermsParams{Original: 10000, Created: created, Due: due})
		if err != nil {
			t.Fatal(err)
		}
		return &dt
	}
	ok, past := createReq("lote-ok", 10000), createReq("lote-past", 10000)
	ok.Due, ok.DebtorTaxID, ok.DebtorName = terms(today, today.AddDays(10)), batchCPF(1), "Ana"
	// Valid when made (the day before); the PSP, today, finds it past.
	past.Due, past.DebtorTaxID, past.DebtorName = terms(today.AddDays(-1), today.AddDays(-1)), batchCPF(2), "Bia"
	req := ports.DueDateBatchRequest{Scope: scope(), BatchID: "2p5kfyztuadapterlotexxxxxxxxxxxxxxx",
		Charges: []ports.CreatePixChargeRequest{ok, past}}
	for range 2 {
		if err := a.OpenDueDateBatch(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	items, err := a.DueDateBatchStatus(ctx, scope(), req.BatchID)
	if err != nil || len(items) != 2 {
		t.Fatalf("status: %+v %v", items, err)
	}
	byTxID := map[string]ports.DueDateBatchItem{}
	for _, it := range items {
		byTxID[it.TxID] = it
	}
	if it := byTxID[ok.TxID]; !it.Opened || it.Pending || it.Refusal != nil {
		t.Errorf("the valid cobv: %+v", it)
	}
	if it := byTxID[past.TxID]; it.Opened || it.Pending || !errors.Is(it.Refusal, ports.ErrAcquirerRejected) {
		t.Errorf("the past cobv: %+v", it)
	}
	if n := sim.OperationHits("PUT /lotecobv/{id}"); n != 2 {
		t.Errorf("%d lote PUTs, want 2", n)
	}
	ok.OpenedInBatch = true
	cob, err := a.CreatePixCharge(ctx, ok)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := sim.CobVByTxID(ok.TxID); cob.BRCode != v.PixCopiaECola || sim.OperationHits("PUT /cobv/{txid}") != 0 {
		t.Errorf("the opened cobv's create: %+v (%d cobv PUTs)", cob, sim.OperationHits("PUT /cobv/{txid}"))
	}
	if _, err := a.DueDateBatchStatus(ctx, scope(), "2p5kfyztuadapterloteyyyyyyyyyyyyyyy"); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("a batch the PSP never received: %v", err)
	}
	calls := sim.OperationHits("PUT /lotecobv/{id}")
	if err := a.OpenDueDateBatch(ctx, ports.DueDateBatchRequest{Scope: scope(), BatchID: "x"}); !errors.Is(err, ports.ErrAcquirerRejected) ||
		sim.OperationHits("PUT /lotecobv/{id}") != calls {
		t.Errorf("an empty lote: %v", err)
	}
}
