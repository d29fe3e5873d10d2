package app_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/sandbox"
	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
)

// batchStore is the real store with a process that dies: once dieAfter
// charges have committed, the one that reaches it commits but its answer
// never leaves, and every later create and batch save fails without
// writing, as they would in a process that is gone.
type batchStore struct {
	*store.DB
	mu       sync.Mutex
	dieAfter int // 0: never
	// dieOnLote, when set, makes the process die as it saves that lote
	// state (nothing of the save is written).
	dieOnLote string
	commits   int
	dead      bool
	// died closes when the process dies.
	died chan struct{}
}

func (d *batchStore) CreateCharge(ctx context.Context, c *domain.Charge, evs []domain.Event, rec *ports.IdempotencyRecord) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead {
		return errDied
	}
	if err := d.DB.CreateCharge(ctx, c, evs, rec); err != nil {
		return err
	}
	d.commits++
	if d.dieAfter > 0 && d.commits == d.dieAfter {
		d.dead = true
		close(d.died)
		return errDied
	}
	return nil
}

func (d *batchStore) SaveChargeBatchItems(ctx context.Context, ref ports.ChargeBatchRef, items []ports.ChargeBatchItem, lote *string,
	now, leaseUntil time.Time,
) (*ports.ChargeBatch, error) {
	d.mu.Lock()
	if !d.dead && lote != nil && *lote == d.dieOnLote {
		d.dead = true
		close(d.died)
	}
	dead := d.dead
	d.mu.Unlock()
	if dead {
		return nil, errDied
	}
	return d.DB.SaveChargeBatchItems(ctx, ref, items, lote, now, leaseUntil)
}

// batchRig is one database and the processes that share it.
type batchRig struct {
	t      *testing.T
	db     *store.DB
	clock  *testkit.Clock
	caller app.Caller
}

func newBatchRig(t *testing.T, mode domain.Mode) *batchRig {
	t.Helper()
	db, err := store.Open(context.Background(), testenv.SQLiteDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &batchRig{t: t, db: db, clock: testkit.NewClock(time.Time{}),
		caller: app.Caller{Account: domain.Account{ID: "acct_batch", MerchantName: "Escola", MerchantCity: "SAO PAULO"}, Mode: mode}}
}

// process starts a process over the rig's database: its own idempotency
// cache and services, its store dying after dieAfter commits (0: never).
func (r *batchRig) process(acq ports.Acquirer, dieAfter int) (*app.ChargeService, *batchStore) {
	st := &batchStore{DB: r.db, dieAfter: dieAfter, died: make(chan struct{})}
	once := exactlyonce.NewDatabaseChecked(r.db, idempotency.NewMemory(r.clock.Now), r.clock, app.RandomIDs{}, discard(), exactlyonce.Config{})
	return app.NewChargeService(st, once, acq, nil, r.clock, app.RandomIDs{}, discard(), app.ChargesConfig{Batches: st}), st
}

// items are n due-date creates, each for a debtor of its own.
func (r *batchRig) items(n int) []app.BatchItem {
	due := domain.BrasiliaDate(r.clock.Now()).AddDays(10)
	out := make([]app.BatchItem, n)
	for i := range out {
		out[i].Input = app.CreateChargeInput{Amount: int64(500 + i), Currency: "BRL", Methods: []domain.Method{domain.MethodPix},
			StrictDocument: true, Customer: domain.Customer{Name: fmt.Sprintf("Aluno %d", i), Document: cpfNumber(i)},
			Due: &domain.DueTermsParams{Due: due}}
	}
	return out
}

// cpfNumber is the n-th of a run of valid CPFs.
func cpfNumber(n int) string {
	d := []byte(fmt.Sprintf("%09d", 200_000_000+n))
	for _, size := range []int{9, 10} {
		sum := 0
		for i := range size {
			sum += int(d[i]-'0') * (size + 1 - i)
		}
		d = append(d, byte('0'+sum*10%11%10))
	}
	return string(d)
}

func (r *batchRig) create(svc *app.ChargeService, items []app.BatchItem, key string) string {
	r.t.Helper()
	resp, err := svc.CreateBatch(context.Background(), r.caller, items, app.Idempotency{Key: key, Fingerprint: "fp-" + key},
		func(b *app.ChargeBatch) (app.Response, error) {
			return app.Response{StatusCode: 202, Body: []byte(b.ID)}, nil
		})
	if err != nil {
		r.t.Fatal(err)
	}
	return string(resp.Body)
}

// charges counts the account's charges in the database.
func (r *batchRig) charges() int {
	r.t.Helper()
	n, err := r.db.Bun().NewSelect().Table("charges").Where("account_id = ?", r.caller.Account.ID).Count(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	return int(n)
}

// A process dies in the middle of a batch — some items' charges created
// and saved, some committed whose outcome was never saved, the rest never
// tried — and a worker in another process, once the lease ends, resumes
// the half-done batch: every item ends with exactly one charge (the ones
// committed before the crash are found, not made again) and none is lost.
func TestChargeBatchResumesAfterACrashWithoutDuplicates(t *testing.T) {
	t.Parallel()
	r := newBatchRig(t, domain.ModeTest)
	acq := sandbox.New(sandbox.Config{LocationHost: "pay.example.com/pix"}, r.clock)
	const n, dieAfter = 130, 70
	first, st := r.process(acq, dieAfter)
	id := r.create(first, r.items(n), "batch-crash-1")
	<-st.died
	first.WaitBackground()

	b, items, err := r.db.GetChargeBatch(context.Background(), r.caller.Scope(), id)
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != domain.BatchProcessing || b.Created == 0 || b.Created >= dieAfter || b.Pending == 0 {
		t.Fatalf("after the crash: %d created, %d pending (%s), want a half-done batch", b.Created, b.Pending, b.Status)
	}
	if got := r.charges(); got != dieAfter {
		t.Fatalf("%d charges committed before the crash, want %d", got, dieAfter)
	}
	saved := map[int]string{}
	for _, it := range items {
		if it.Status == domain.BatchItemCreated {
			saved[it.Index] = it.ChargeID
		}
	}

	second, _ := r.process(acq, 0)
	if n, err := second.ProcessChargeBatches(context.Background()); err != nil || n != 0 {
		t.Fatalf("a worker took the batch while its lease held: %d %v", n, err)
	}
	r.clock.Advance(2 * time.Minute)
	if n, err := second.ProcessChargeBatches(context.Background()); err != nil || n != 1 {
		t.Fatalf("worker: %d %v", n, err)
	}
	done, err := second.GetBatch(context.Background(), r.caller, id)
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != domain.BatchCompleted || done.Created != n || done.Refused != 0 || done.Pending != 0 {
		t.Fatalf("resumed: %+v", done.ChargeBatch)
	}
	if got := r.charges(); got != n {
		t.Fatalf("%d charges for %d items", got, n)
	}
	ids := map[string]bool{}
	for _, it := range done.Items {
		if it.Charge == nil || it.Charge.Amount() != int64(500+it.Index) {
			t.Fatalf("item %d: %+v", it.Index, it)
		}
		if prev, ok := saved[it.Index]; ok && prev != it.ChargeID {
			t.Errorf("item %d's charge changed from %s to %s", it.Index, prev, it.ChargeID)
		}
		ids[it.ChargeID] = true
	}
	if len(ids) != n {
		t.Errorf("%d distinct charges for %d items", len(ids), n)
	}
	// Running the worker again changes nothing.
	r.clock.Advance(2 * time.Minute)
	if n, err := second.ProcessChargeBatches(context.Background()); err != nil || n != 0 {
		t.Errorf("a completed batch was claimed again: %d %v", n, err)
	}
}

// loteAcquirer is a live acquirer that opens due-date charges in lotes:
// the sandbox's cobs, and every lote request and every cob request kept.
type loteAcquirer struct {
	*sandbox.Acquirer
	mu    sync.Mutex
	lotes []ports.DueDateBatchRequest
	cobs  []ports.CreatePixChargeRequest
	// refuse is the txid whose cob the lote refuses.
	refuse string
}

func (l *loteAcquirer) SupportsDueDateBatches(ports.Scope) bool { return true }

func (l *loteAcquirer) OpenDueDateBatch(_ context.Context, req ports.DueDateBatchRequest) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lotes = append(l.lotes, req)
	return nil
}

func (l *loteAcquirer) DueDateBatchStatus(_ context.Context, _ ports.Scope, batchID string) ([]ports.DueDateBatchItem, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lotes) == 0 {
		return nil, ports.ErrNotFound
	}
	var out []ports.DueDateBatchItem
	for _, c := range l.lotes[len(l.lotes)-1].Charges {
		it := ports.DueDateBatchItem{TxID: c.TxID, Opened: true}
		if c.TxID == l.refuse {
			it = ports.DueDateBatchItem{TxID: c.TxID, Refusal: fmt.Errorf("%w: devedor inválido", ports.ErrAcquirerRejected)}
		}
		out = append(out, it)
	}
	return out, nil
}

func (l *loteAcquirer) CreatePixCharge(ctx context.Context, req ports.CreatePixChargeRequest) (*ports.CreatePixChargeResponse, error) {
	l.mu.Lock()
	l.cobs = append(l.cobs, req)
	l.mu.Unlock()
	return l.Acquirer.CreatePixCharge(ctx, req)
}

// With an acquirer that opens lotes, the batch's cobs are asked for in
// one request under txids chosen beforehand, and each item's create takes
// its cob from the lote (OpenedInBatch) under that same txid. A process
// that dies after the lote went out, before it recorded that, resumes by
// asking for the same lote again (the same txids), and creates each
// charge once; a cob the lote refused refuses its item.
func TestChargeBatchLoteResumesWithTheSameTxIDs(t *testing.T) {
	t.Parallel()
	r := newBatchRig(t, domain.ModeLive)
	acq := &loteAcquirer{Acquirer: sandbox.New(sandbox.Config{LocationHost: "pay.example.com/pix"}, r.clock)}
	const n = 60
	first, st := r.process(acq, 0)
	st.dieOnLote = ports.LoteOpened
	id := r.create(first, r.items(n), "batch-lote-1")
	<-st.died
	first.WaitBackground()
	if len(acq.lotes) != 1 || len(acq.lotes[0].Charges) != n || len(acq.cobs) != 0 {
		t.Fatalf("before the crash: %d lote requests, %d cobs", len(acq.lotes), len(acq.cobs))
	}
	asked := txidsOf(acq.lotes[0])
	acq.refuse = asked[n-1]

	second, _ := r.process(acq, 0)
	r.clock.Advance(2 * time.Minute)
	if _, err := second.ProcessChargeBatches(context.Background()); err != nil {
		t.Fatal(err)
	}
	done, err := second.GetBatch(context.Background(), r.caller, id)
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != domain.BatchCompleted || done.Created != n-1 || done.Refused != 1 {
		t.Fatalf("resumed: %+v", done.ChargeBatch)
	}
	if last := done.Items[n-1]; last.Error == nil || last.Error.Code != "acquirer_rejected" {
		t.Errorf("the item whose cob the lote refused: %+v", last)
	}
	if got := r.charges(); got != n-1 {
		t.Fatalf("%d charges for %d created items", got, n-1)
	}
	if len(acq.lotes) != 2 || !slices.Equal(txidsOf(acq.lotes[1]), asked) {
		t.Fatalf("%d lote requests; the second must name the first's txids", len(acq.lotes))
	}
	byTxID := map[string]bool{}
	for _, c := range acq.cobs {
		if !c.OpenedInBatch || !slices.Contains(asked, c.TxID) {
			t.Fatalf("a create asked for txid %s (opened in the lote: %v), not one of the lote's", c.TxID, c.OpenedInBatch)
		}
		byTxID[c.TxID] = true
	}
	for _, it := range done.Items[:n-1] {
		if !byTxID[it.Charge.Snapshot().Pix.TxID] {
			t.Errorf("item %d's charge holds txid %s, not its lote's", it.Index, it.Charge.Snapshot().Pix.TxID)
		}
	}
}

func txidsOf(req ports.DueDateBatchRequest) []string {
	out := make([]string, len(req.Charges))
	for i, c := range req.Charges {
		out[i] = c.TxID
	}
	return out
}

// An item the store cannot take now is retried, not refused: the batch
// stays processing with the item pending.
func TestChargeBatchKeepsAnItemPendingThroughAnOutage(t *testing.T) {
	t.Parallel()
	r := newBatchRig(t, domain.ModeTest)
	acq := sandbox.New(sandbox.Config{LocationHost: "pay.example.com/pix"}, r.clock)
	acq.SetDown(true)
	svc, _ := r.process(acq, 0)
	id := r.create(svc, r.items(3), "batch-outage-1")
	svc.WaitBackground()
	b, err := svc.GetBatch(context.Background(), r.caller, id)
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != domain.BatchProcessing || b.Pending != 3 {
		t.Fatalf("during the outage: %+v", b.ChargeBatch)
	}
	acq.SetDown(false)
	r.clock.Advance(10 * time.Second)
	if _, err := svc.ProcessChargeBatches(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b, err = svc.GetBatch(context.Background(), r.caller, id); err != nil || b.Created != 3 {
		t.Fatalf("after the outage: %+v %v", b, err)
	}
}
