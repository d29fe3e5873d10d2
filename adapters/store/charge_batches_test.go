package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// TestChargeBatchStore is the batch contract, on both databases: a batch
// commits with its items and its key's record, or not at all; saving items
// writes only those still pending and keeps the counts equal to the items;
// the batch completes when none is pending; claims skip a batch whose
// lease holds, and another account's batch is not found.
func TestChargeBatchStore(t *testing.T) {
	t.Parallel()
	for _, d := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"postgres", testenv.PostgresDSN}, {"sqlite", testenv.SQLiteDSN}} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			testChargeBatchStore(t, openStore(t, d.dsn(t)))
		})
	}
}

func testChargeBatchStore(t *testing.T, db *store.DB) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	scope := ports.Scope{AccountID: "acct_batches", Mode: domain.ModeTest}
	const id = "2p5kfyztubatchstorexxxxxxxxxxxxxxxx"
	b := ports.ChargeBatch{Scope: scope, ID: id, Status: domain.BatchProcessing, Total: 3, Pending: 2, Refused: 1,
		MerchantName: "Escola", MerchantCity: "SAO PAULO", CreatedAt: now}
	refusal := &ports.ChargeBatchError{Status: 400, Type: "invalid_request_error", Code: "parameter_missing", Message: "due_date is required", Param: "due_date"}
	items := []ports.ChargeBatchItem{
		{Index: 0, Status: domain.BatchItemPending, Input: []byte(`{"amount":1}`)},
		{Index: 1, Status: domain.BatchItemRefused, Input: []byte(`{}`), Error: refusal},
		{Index: 2, Status: domain.BatchItemPending, Input: []byte(`{"amount":3}`)},
	}
	rec := &ports.IdempotencyRecord{IdempotencyKey: ports.IdempotencyKey{Scope: scope, Key: "batch-store-1"}, Fingerprint: "f",
		ResourceID: id, StatusCode: 202, Body: []byte(`{}`), CreatedAt: now}
	if err := db.CreateChargeBatch(ctx, b, items, rec, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	again := b
	again.ID = "2p5kfyztubatchstoreyyyyyyyyyyyyyyyy"
	if err := db.CreateChargeBatch(ctx, again, items, rec, now); !errors.Is(err, ports.ErrIdempotencyKeyExists) {
		t.Fatalf("a second batch under the key: %v", err)
	}
	if _, _, err := db.GetChargeBatch(ctx, scope, again.ID); !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("the refused batch was written: %v", err)
	}
	got, gotItems, err := db.GetChargeBatch(ctx, scope, id)
	if err != nil || got.Total != 3 || got.Pending != 2 || got.MerchantCity != "SAO PAULO" || len(gotItems) != 3 ||
		string(gotItems[2].Input) != `{"amount":3}` || gotItems[1].Error == nil || *gotItems[1].Error != *refusal {
		t.Fatalf("read back: %+v %+v %v", got, gotItems, err)
	}
	if _, _, err := db.GetChargeBatch(ctx, ports.Scope{AccountID: "acct_other", Mode: domain.ModeTest}, id); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("another account read the batch: %v", err)
	}
	if _, _, err := db.GetChargeBatch(ctx, ports.Scope{AccountID: scope.AccountID, Mode: domain.ModeLive}, id); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("the other mode read the batch: %v", err)
	}

	if refs, err := db.ClaimChargeBatches(ctx, now, now.Add(time.Minute), 10); err != nil || len(refs) != 0 {
		t.Fatalf("claimed while the lease holds: %v %v", refs, err)
	}
	ref := ports.ChargeBatchRef{Scope: scope, ID: id}
	// Item 0 created; item 1 (refused) cannot be changed; a lote state.
	lote := ports.LoteAsked
	saved, err := db.SaveChargeBatchItems(ctx, ref, []ports.ChargeBatchItem{
		{Index: 0, Status: domain.BatchItemCreated, ChargeID: "charge0"},
		{Index: 1, Status: domain.BatchItemCreated, ChargeID: "nope"},
		{Index: 2, Status: domain.BatchItemPending, Attempts: 1, TxID: "txid2"},
	}, &lote, now, now.Add(-time.Second))
	if err != nil || saved.Created != 1 || saved.Refused != 1 || saved.Pending != 1 || saved.Status != domain.BatchProcessing || saved.Lote != ports.LoteAsked {
		t.Fatalf("first save: %+v %v", saved, err)
	}
	_, gotItems, _ = db.GetChargeBatch(ctx, scope, id)
	if gotItems[1].Status != domain.BatchItemRefused || gotItems[1].ChargeID != "" || gotItems[2].Attempts != 1 || gotItems[2].TxID != "txid2" {
		t.Errorf("after the first save: %+v", gotItems)
	}
	refs, err := db.ClaimChargeBatches(ctx, now, now.Add(time.Minute), 10)
	if err != nil || len(refs) != 1 || refs[0] != ref {
		t.Fatalf("claim once the lease ended: %v %v", refs, err)
	}
	if refs, _ := db.ClaimChargeBatches(ctx, now, now.Add(time.Minute), 10); len(refs) != 0 {
		t.Errorf("claimed twice: %v", refs)
	}
	saved, err = db.SaveChargeBatchItems(ctx, ref, []ports.ChargeBatchItem{{Index: 2, Status: domain.BatchItemCreated, ChargeID: "charge2"}},
		nil, now.Add(time.Second), now)
	if err != nil || saved.Status != domain.BatchCompleted || saved.Created != 2 || saved.Pending != 0 || saved.Lote != ports.LoteAsked ||
		!saved.CompletedAt.Equal(now.Add(time.Second)) {
		t.Fatalf("last save: %+v %v", saved, err)
	}
	if refs, _ := db.ClaimChargeBatches(ctx, now.Add(time.Hour), now.Add(2*time.Hour), 10); len(refs) != 0 {
		t.Errorf("a completed batch was claimed: %v", refs)
	}
	if _, err := db.SaveChargeBatchItems(ctx, ports.ChargeBatchRef{Scope: ports.Scope{AccountID: "acct_other", Mode: domain.ModeTest}, ID: id},
		nil, nil, now, now); !errors.Is(err, ports.ErrNotFound) {
		t.Errorf("another account saved items: %v", err)
	}
}
