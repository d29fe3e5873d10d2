package exactlyonce_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

type fixedClock struct{}

func (fixedClock) Now() time.Time { return t0 }

// memStore is ports.IdempotencyStore in maps, logging calls in order.
type memStore struct {
	mu      sync.Mutex
	recs    map[ports.IdempotencyKey]ports.IdempotencyRecord
	intents map[ports.IdempotencyKey]ports.ProviderIntent
	charges map[string]bool // txids a committed charge holds
	calls   []string
}

func newMemStore() *memStore {
	return &memStore{recs: map[ports.IdempotencyKey]ports.IdempotencyRecord{},
		intents: map[ports.IdempotencyKey]ports.ProviderIntent{}, charges: map[string]bool{}}
}

func (m *memStore) log(call string) { m.calls = append(m.calls, call) }

// commit is what a store's create does with an attempt's record.
func (m *memStore) commit(rec *ports.IdempotencyRecord, txid string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.log("commit")
	if _, ok := m.recs[rec.IdempotencyKey]; ok {
		return ports.ErrIdempotencyKeyExists
	}
	m.recs[rec.IdempotencyKey] = *rec
	if rec.SettlesIntent {
		delete(m.intents, rec.IdempotencyKey)
	}
	if txid != "" {
		m.charges[txid] = true
	}
	return nil
}

func (m *memStore) GetIdempotencyRecord(_ context.Context, key ports.IdempotencyKey) (*ports.IdempotencyRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.log("get")
	if r, ok := m.recs[key]; ok {
		return &r, nil
	}
	return nil, ports.ErrNotFound
}

func (m *memStore) RecordProviderIntent(_ context.Context, in ports.ProviderIntent) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.log("intent")
	m.intents[in.Key] = in
	return nil
}

func (m *memStore) ProviderIntentsBefore(_ context.Context, t time.Time, _ int) ([]ports.ProviderIntent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []ports.ProviderIntent
	for _, in := range m.intents {
		if in.CreatedAt.Before(t) {
			out = append(out, in)
		}
	}
	return out, nil
}

func (m *memStore) DeleteProviderIntent(_ context.Context, key ports.IdempotencyKey) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.log("delete intent")
	delete(m.intents, key)
	return nil
}

func (m *memStore) IdempotencyRecordOrIntent(_ context.Context, in ports.ProviderIntent) (*ports.IdempotencyRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.log("get or intent")
	if r, ok := m.recs[in.Key]; ok {
		return &r, nil
	}
	m.intents[in.Key] = in
	return nil, ports.ErrNotFound
}

func (m *memStore) FindChargeByTxID(_ context.Context, _ ports.Scope, txid string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.charges[txid] {
		return "ch", nil
	}
	return "", ports.ErrNotFound
}

func (m *memStore) callLog() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.calls)
}

// memCobs is ports.CobIntents in a map.
type memCobs struct {
	mu sync.Mutex
	m  map[string]ports.ProviderIntent // by txid
}

func (c *memCobs) RecordCobIntent(_ context.Context, ins ...ports.ProviderIntent) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, in := range ins {
		c.m[in.TxID] = in
	}
	return nil
}

func (c *memCobs) StartCobIntent(ctx context.Context, in ports.ProviderIntent) func() error {
	err := c.RecordCobIntent(ctx, in)
	return func() error { return err }
}

func (c *memCobs) CobIntentsBefore(_ context.Context, t time.Time, _ int) ([]ports.ProviderIntent, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []ports.ProviderIntent
	for _, in := range c.m {
		if in.CreatedAt.Before(t) {
			out = append(out, in)
		}
	}
	return out, nil
}

func (c *memCobs) DropCobIntent(_ context.Context, ins ...ports.ProviderIntent) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, in := range ins {
		delete(c.m, in.TxID)
	}
	return nil
}

func (c *memCobs) held() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

var (
	testScope = ports.Scope{AccountID: "acct_1", Mode: domain.ModeTest}
	liveScope = ports.Scope{AccountID: "acct_1", Mode: domain.ModeLive}
)

// writeOnce is a write that commits its record and counts its runs.
func writeOnce(store *memStore, runs *int, body string) func(*exactlyonce.Attempt) (exactlyonce.Response, error) {
	return func(a *exactlyonce.Attempt) (exactlyonce.Response, error) {
		*runs++
		resp := exactlyonce.Response{StatusCode: 201, Body: []byte(body)}
		return resp, store.commit(a.Record("res_1", resp, t0), "")
	}
}

// Under both strategies a key runs its write once: a retry gets the same
// bytes, marked replayed; another request under the key gets ErrKeyReused;
// neither runs the write again.
func TestRetryReplaysTheFirstAnswer(t *testing.T) {
	t.Parallel()
	for _, strategy := range []exactlyonce.Strategy{exactlyonce.DatabaseChecked, exactlyonce.CacheFirst} {
		t.Run(strategy.String(), func(t *testing.T) {
			t.Parallel()
			store := newMemStore()
			r := newRunner(strategy, store, idempotency.NewMemory(nil), &memCobs{m: map[string]ports.ProviderIntent{}})
			runs := 0
			req := exactlyonce.Request{Key: "key-0001", Fingerprint: "fp-a"}
			first, err := r.Do(context.Background(), testScope, req, exactlyonce.Options{}, writeOnce(store, &runs, `{"id":1}`))
			if err != nil || first.Replayed || string(first.Body) != `{"id":1}` {
				t.Fatalf("first: %+v %v", first, err)
			}
			r.Wait() // the claim is marked answered
			again, err := r.Do(context.Background(), testScope, req, exactlyonce.Options{}, writeOnce(store, &runs, `{"id":2}`))
			if err != nil || !again.Replayed || string(again.Body) != `{"id":1}` || again.StatusCode != 201 {
				t.Fatalf("retry: %+v %v", again, err)
			}
			other := exactlyonce.Request{Key: "key-0001", Fingerprint: "fp-b"}
			if _, err := r.Do(context.Background(), testScope, other, exactlyonce.Options{}, writeOnce(store, &runs, "x")); !errors.Is(err, exactlyonce.ErrKeyReused) {
				t.Fatalf("another request under the key: %v", err)
			}
			if runs != 1 {
				t.Fatalf("the write ran %d times", runs)
			}
		})
	}
}

// A request that meets its key's write still running is told so, with how
// long the other claim lasts; the write is not run.
func TestKeyInUse(t *testing.T) {
	t.Parallel()
	store := newMemStore()
	cache := idempotency.NewMemory(nil)
	r := newRunner(exactlyonce.DatabaseChecked, store, cache, nil)
	req := exactlyonce.Request{Key: "key-0002", Fingerprint: "fp"}
	entered, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := r.Do(context.Background(), testScope, req, exactlyonce.Options{}, func(a *exactlyonce.Attempt) (exactlyonce.Response, error) {
			close(entered)
			<-release
			resp := exactlyonce.Response{StatusCode: 201}
			return resp, store.commit(a.Record("r", resp, t0), "")
		})
		done <- err
	}()
	<-entered
	ran := false
	_, err := r.Do(context.Background(), testScope, req, exactlyonce.Options{}, func(*exactlyonce.Attempt) (exactlyonce.Response, error) {
		ran = true
		return exactlyonce.Response{}, nil
	})
	var inUse *exactlyonce.KeyInUseError
	if !errors.As(err, &inUse) || inUse.Remaining <= 0 || ran {
		t.Fatalf("concurrent request: %v (ran %v)", err, ran)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A write without a claim (DatabaseOnly) that fails because another
// request of its key committed meanwhile answers as that request did; a
// failure with the key still unused is the write's own.
func TestDatabaseOnlyFailureAnswersFromTheRecord(t *testing.T) {
	t.Parallel()
	store := newMemStore()
	r := newRunner(exactlyonce.DatabaseChecked, store, idempotency.NewMemory(nil), nil)
	req := exactlyonce.Request{Key: "key-0003", Fingerprint: "fp"}
	refused := errors.New("nothing left to refund")
	resp, err := r.Do(context.Background(), testScope, req, exactlyonce.Options{DatabaseOnly: true}, func(a *exactlyonce.Attempt) (exactlyonce.Response, error) {
		// The twin commits first; this one then finds nothing to do.
		if err := store.commit(a.Record("twin", exactlyonce.Response{StatusCode: 201, Body: []byte("twin")}, t0), ""); err != nil {
			t.Fatal(err)
		}
		return exactlyonce.Response{}, refused
	})
	if err != nil || !resp.Replayed || string(resp.Body) != "twin" {
		t.Fatalf("got %+v %v, want the twin's answer", resp, err)
	}
	other := exactlyonce.Request{Key: "key-0004", Fingerprint: "fp"}
	if _, err := r.Do(context.Background(), testScope, other, exactlyonce.Options{DatabaseOnly: true}, func(*exactlyonce.Attempt) (exactlyonce.Response, error) {
		return exactlyonce.Response{}, refused
	}); !errors.Is(err, refused) {
		t.Fatalf("got %v, want the write's own refusal", err)
	}
}

// DatabaseChecked, live cob: the check records the intent in its round
// trip, the txid is derived from the key (a retry asks for the same cob),
// the record settles the intent; a write refused before its cob deletes
// the intent, one that failed after asking for it leaves it to the sweep.
func TestDatabaseCheckedLiveCob(t *testing.T) {
	t.Parallel()
	store := newMemStore()
	r := newRunner(exactlyonce.DatabaseChecked, store, idempotency.NewMemory(nil), nil)
	opts := exactlyonce.Options{LiveCob: true}
	var txids []string
	cobWrite := func(fail error) func(a *exactlyonce.Attempt) (exactlyonce.Response, error) {
		return func(a *exactlyonce.Attempt) (exactlyonce.Response, error) {
			txid, err := a.BeforeCob(context.Background())
			if err != nil {
				return exactlyonce.Response{}, err
			}
			txids = append(txids, txid)
			if fail != nil {
				return exactlyonce.Response{}, fail
			}
			rec := a.Record("c", exactlyonce.Response{StatusCode: 201}, t0)
			if !rec.SettlesIntent {
				t.Error("the record does not settle the store's intent")
			}
			return exactlyonce.Response{StatusCode: 201}, store.commit(rec, txid)
		}
	}
	lost := errors.New("connection lost")
	req := exactlyonce.Request{Key: "key-0005", Fingerprint: "fp"}
	if _, err := r.Do(context.Background(), liveScope, req, opts, cobWrite(lost)); !errors.Is(err, lost) {
		t.Fatal(err)
	}
	if _, err := r.Do(context.Background(), liveScope, req, opts, cobWrite(nil)); err != nil {
		t.Fatal(err)
	}
	if len(txids) != 2 || txids[0] != txids[1] {
		t.Fatalf("txids %v: a retry must ask for the same cob", txids)
	}
	if got := store.callLog(); !slices.Equal(got, []string{"get or intent", "get or intent", "commit"}) {
		t.Fatalf("calls %v", got)
	}
	refusedReq := exactlyonce.Request{Key: "key-0006", Fingerprint: "fp"}
	invalid := errors.New("amount must be positive")
	if _, err := r.Do(context.Background(), liveScope, refusedReq, opts, func(*exactlyonce.Attempt) (exactlyonce.Response, error) {
		return exactlyonce.Response{}, invalid
	}); !errors.Is(err, invalid) {
		t.Fatal(err)
	}
	if got := store.callLog(); got[len(got)-1] != "delete intent" {
		t.Fatalf("calls %v: a write refused before its cob must delete its intent", got)
	}
}

// CacheFirst, claim acquired: no database round trip before the cob; the
// cob's txid is the cached intent's own, which the record does not settle
// and the runner drops once the write commits. A write that failed after
// asking for its cob keeps the intent, and the sweep cancels that cob.
func TestCacheFirstLiveCob(t *testing.T) {
	t.Parallel()
	store := newMemStore()
	cobs := &memCobs{m: map[string]ports.ProviderIntent{}}
	r := newRunner(exactlyonce.CacheFirst, store, idempotency.NewMemory(nil), cobs)
	opts := exactlyonce.Options{LiveCob: true}
	var txid string
	_, err := r.Do(context.Background(), liveScope, exactlyonce.Request{Key: "key-0007", Fingerprint: "fp"}, opts, func(a *exactlyonce.Attempt) (exactlyonce.Response, error) {
		var err error
		if txid, err = a.BeforeCob(context.Background()); err != nil {
			return exactlyonce.Response{}, err
		}
		if cobs.held() != 1 {
			t.Error("the cob is asked for before its intent is in the cache")
		}
		rec := a.Record("c", exactlyonce.Response{StatusCode: 201}, t0)
		if rec.SettlesIntent {
			t.Error("the record settles an intent the store does not hold")
		}
		return exactlyonce.Response{StatusCode: 201}, store.commit(rec, txid)
	})
	if err != nil {
		t.Fatal(err)
	}
	r.Wait()
	if txid == domain.DeriveTxID(liveScope.AccountID, string(liveScope.Mode), "key-0007") {
		t.Fatal("an unchecked write asked for the key's derived txid")
	}
	if got := store.callLog(); !slices.Equal(got, []string{"commit"}) {
		t.Fatalf("calls %v: the database is asked nothing before the commit", got)
	}
	if cobs.held() != 0 {
		t.Fatalf("%d intents left after the commit", cobs.held())
	}

	lost := errors.New("connection lost")
	var orphan string
	_, err = r.Do(context.Background(), liveScope, exactlyonce.Request{Key: "key-0008", Fingerprint: "fp"}, opts, func(a *exactlyonce.Attempt) (exactlyonce.Response, error) {
		orphan, _ = a.BeforeCob(context.Background())
		return exactlyonce.Response{}, lost
	})
	if !errors.Is(err, lost) {
		t.Fatal(err)
	}
	r.Wait()
	if cobs.held() != 1 {
		t.Fatalf("%d intents held, want the failed write's", cobs.held())
	}
	// Older than OrphanCobAge: the sweep cancels that cob and drops it.
	late := newRunnerAt(exactlyonce.CacheFirst, store, cobs, t0.Add(exactlyonce.OrphanCobAge+time.Second))
	var cancelled []string
	n, err := late.SweepOrphanCobs(context.Background(), func(_ context.Context, _ ports.Scope, txid string) error {
		cancelled = append(cancelled, txid)
		return nil
	})
	if err != nil || n != 1 || !slices.Equal(cancelled, []string{orphan}) || cobs.held() != 0 {
		t.Fatalf("sweep: %d settled, cancelled %v, %d held, %v", n, cancelled, cobs.held(), err)
	}
}

// The sweep keeps an intent whose cob the acquirer could not be asked to
// cancel, and only forgets one whose charge committed.
func TestSweepKeepsWhatItCouldNotCancel(t *testing.T) {
	t.Parallel()
	store := newMemStore()
	old := t0.Add(-time.Hour)
	committed := ports.ProviderIntent{Key: ports.IdempotencyKey{Scope: liveScope, Key: "a"}, TxID: "tx-committed", CreatedAt: old}
	orphan := ports.ProviderIntent{Key: ports.IdempotencyKey{Scope: liveScope, Key: "b"}, TxID: "tx-orphan", CreatedAt: old}
	store.intents[committed.Key], store.intents[orphan.Key] = committed, orphan
	store.charges["tx-committed"] = true
	r := newRunner(exactlyonce.DatabaseChecked, store, nil, nil)
	var asked []string
	n, err := r.SweepOrphanCobs(context.Background(), func(_ context.Context, _ ports.Scope, txid string) error {
		asked = append(asked, txid)
		return ports.ErrAcquirerUnavailable
	})
	if err != nil || n != 1 || !slices.Equal(asked, []string{"tx-orphan"}) {
		t.Fatalf("settled %d, asked %v, %v", n, asked, err)
	}
	if _, ok := store.intents[orphan.Key]; !ok || len(store.intents) != 1 {
		t.Fatalf("intents left %v, want the orphan's alone", store.intents)
	}
}

func newRunner(strategy exactlyonce.Strategy, store *memStore, cache ports.IdempotencyCache, cobs *memCobs) *exactlyonce.Runner {
	if strategy == exactlyonce.CacheFirst {
		return exactlyonce.NewCacheFirst(store, cache, cobs, fixedClock{}, app.RandomIDs{}, discard(), exactlyonce.Config{})
	}
	return exactlyonce.NewDatabaseChecked(store, cache, fixedClock{}, app.RandomIDs{}, discard(), exactlyonce.Config{})
}

type atClock time.Time

func (c atClock) Now() time.Time { return time.Time(c) }

func newRunnerAt(strategy exactlyonce.Strategy, store *memStore, cobs *memCobs, now time.Time) *exactlyonce.Runner {
	if strategy == exactlyonce.CacheFirst {
		return exactlyonce.NewCacheFirst(store, nil, cobs, atClock(now), app.RandomIDs{}, discard(), exactlyonce.Config{})
	}
	return exactlyonce.NewDatabaseChecked(store, nil, atClock(now), app.RandomIDs{}, discard(), exactlyonce.Config{})
}
