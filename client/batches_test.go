package client_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/quitapix/quita/client"
	"github.com/quitapix/quita/quitatest"
)

// batchCPF is the n-th of a run of valid CPFs.
func batchCPF(n int) string {
	d := []byte(fmt.Sprintf("%09d", 400_000_000+n))
	for _, size := range []int{9, 10} {
		sum := 0
		for i := range size {
			sum += int(d[i]-'0') * (size + 1 - i)
		}
		d = append(d, byte('0'+sum*10%11%10))
	}
	return string(d)
}

// A batch of due-date charges through the SDK (strict decoding: every
// field the server sends has a home): accepted with each item pending or
// refused, replayed under the same key, completed with a charge per valid
// item, and 404 for another account.
func TestChargeBatchAgainstServer(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, srv *quitatest.Server) {
		ctx := context.Background()
		qc := srv.Client(client.WithStrictDecoding())
		brasilia, err := time.LoadLocation("America/Sao_Paulo")
		if err != nil {
			t.Fatal(err)
		}
		due := time.Now().In(brasilia).AddDate(0, 0, 15).Format(time.DateOnly)
		p := client.ChargeBatchParams{IdempotencyKey: client.NewIdempotencyKey()}
		for i := range 5 {
			p.Charges = append(p.Charges, client.ChargeParams{Amount: int64(2000 + i), DueDate: due,
				Customer: &client.Customer{Name: fmt.Sprintf("Cliente %d", i), Document: batchCPF(i)},
				Fine:     &client.DueFine{Type: "fixed", Amount: 100}})
		}
		p.Charges = append(p.Charges, client.ChargeParams{Amount: 900}) // no due date
		b := must(qc.Charges.CreateBatch(ctx, p))(t)
		if b.Object != "charge_batch" || b.Total != 6 || b.Pending != 5 || b.Refused != 1 || len(b.Items) != 6 {
			t.Fatalf("accepted %+v", b)
		}
		if e := b.Items[5].Error; b.Items[5].Status != client.BatchItemRefused || e == nil || e.Code != "parameter_missing" || e.Param != "due_date" {
			t.Errorf("the item without a due date: %+v", b.Items[5])
		}
		again, resp, err := qc.Charges.CreateBatchWithResponse(ctx, p)
		if err != nil || !resp.Replayed || again.ID != b.ID {
			t.Fatalf("replay: %+v %+v %v", again, resp, err)
		}
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		done := must(qc.Charges.WaitBatch(wctx, b.ID, 20*time.Millisecond))(t)
		if done.Status != client.ChargeBatchCompleted || done.Created != 5 || done.CompletedAt == nil {
			t.Fatalf("completed %+v", done)
		}
		for _, it := range done.Items[:5] {
			if it.Status != client.BatchItemCreated || it.Charge == nil || it.Charge.Pix == nil || it.Charge.DueDate != due ||
				it.Charge.Amount != int64(2000+it.Index) {
				t.Errorf("item %d: %+v", it.Index, it)
			}
		}
		other := srv.ClientFor(srv.NewAccount(t, "Outra"))
		if _, err := other.Charges.GetBatch(ctx, b.ID); err == nil {
			t.Error("another account read the batch")
		} else {
			apiErr(t, err, 404, "resource_not_found")
		}
		if _, err := qc.Charges.CreateBatch(ctx, client.ChargeBatchParams{}); err == nil {
			t.Error("an empty batch was accepted")
		} else {
			apiErr(t, err, 400, "parameter_invalid")
		}
	})
}
