package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

func TestProviderIntents(t *testing.T) {
	t.Parallel()
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": testenv.SQLiteDSN, "postgres": testenv.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := openStore(t, dsn(t))
			key := func(k string) ports.IdempotencyKey {
				return ports.IdempotencyKey{Scope: ports.Scope{AccountID: "acct_1", Mode: domain.ModeLive}, Key: k}
			}
			for i, k := range []string{"older-key", "newer-key"} {
				in := ports.ProviderIntent{Key: key(k), TxID: "tx" + k, CreatedAt: baseTime.Add(time.Duration(i) * time.Minute)}
				if err := db.RecordProviderIntent(ctx, in); err != nil {
					t.Fatal(err)
				}
			}
			// A retry keeps the first intent.
			if err := db.RecordProviderIntent(ctx, ports.ProviderIntent{Key: key("older-key"), TxID: "other", CreatedAt: baseTime.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			got, err := db.ProviderIntentsBefore(ctx, baseTime.Add(30*time.Second), 10)
			if err != nil || len(got) != 1 || got[0].Key != key("older-key") || got[0].TxID != "txolder-key" || !got[0].CreatedAt.Equal(baseTime.Truncate(time.Microsecond)) {
				t.Fatalf("before: %+v, %v", got, err)
			}
			if err := db.DeleteProviderIntent(ctx, key("older-key")); err != nil {
				t.Fatal(err)
			}
			if err := db.DeleteProviderIntent(ctx, key("older-key")); err != nil {
				t.Fatal(err)
			}
			if got, _ := db.ProviderIntentsBefore(ctx, baseTime.Add(time.Hour), 10); len(got) != 1 || got[0].Key != key("newer-key") {
				t.Fatalf("after delete: %+v", got)
			}
		})
	}
}

// The transaction that commits a charge and its key's idempotency record
// deletes the key's cob intent when it names the charge's txid: only
// creates that never committed leave one for the orphan sweep. A create
// that fails (its key was taken) keeps the intent.
func TestCommittedCreateSettlesItsIntent(t *testing.T) {
	onBothDatabases(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		scope := ports.Scope{AccountID: "acct_1", Mode: domain.ModeLive}
		for _, k := range []string{"committed", "never-committed", "not-the-stores"} {
			in := ports.ProviderIntent{Key: ports.IdempotencyKey{Scope: scope, Key: k}, TxID: "tx" + k, CreatedAt: baseTime}
			if err := db.RecordProviderIntent(ctx, in); err != nil {
				t.Fatal(err)
			}
		}
		c := newCharge(t, scope, baseTime, nil)
		mustCreate(t, db, c, nil, settling(idemRecord(scope, "committed", c.ID())))
		// A create that says it recorded no intent here (its intent went
		// to the cache) deletes none: no DELETE is sent for it.
		other := newCharge(t, scope, baseTime, nil)
		mustCreate(t, db, other, nil, idemRecord(scope, "not-the-stores", other.ID()))
		// "earlier" is already a charge's key when its intent is
		// recorded again: the second create fails whole, and its
		// intent stays.
		taken := newCharge(t, scope, baseTime, nil)
		mustCreate(t, db, taken, nil, idemRecord(scope, "earlier", taken.ID()))
		if err := db.RecordProviderIntent(ctx, ports.ProviderIntent{Key: ports.IdempotencyKey{Scope: scope, Key: "earlier"}, TxID: "txearlier", CreatedAt: baseTime}); err != nil {
			t.Fatal(err)
		}
		dup := newCharge(t, scope, baseTime, nil)
		if err := db.CreateCharge(ctx, dup, nil, settling(idemRecord(scope, "earlier", dup.ID()))); !errors.Is(err, ports.ErrIdempotencyKeyExists) {
			t.Fatalf("create with a taken key: %v, want ErrIdempotencyKeyExists", err)
		}
		// A charge with a cob settles only the intent of its own txid: an
		// earlier attempt of the key that asked for another txid keeps its
		// intent (its cob is still the sweep's).
		for _, k := range []string{"same-txid", "other-txid"} {
			c := newCharge(t, scope, baseTime, nil)
			attachPix(t, c, baseTime)
			txid := c.Pix().TxID
			if k == "other-txid" {
				txid = domain.DeriveTxID("an earlier attempt")
			}
			in := ports.ProviderIntent{Key: ports.IdempotencyKey{Scope: scope, Key: k}, TxID: txid, CreatedAt: baseTime}
			if err := db.RecordProviderIntent(ctx, in); err != nil {
				t.Fatal(err)
			}
			mustCreate(t, db, c, nil, settling(idemRecord(scope, k, c.ID())))
		}
		got, err := db.ProviderIntentsBefore(ctx, baseTime.Add(time.Hour), 10)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, in := range got {
			keys = append(keys, in.Key.Key)
		}
		slices.Sort(keys)
		if want := []string{"earlier", "never-committed", "not-the-stores", "other-txid"}; !slices.Equal(keys, want) {
			t.Errorf("intents left: %v, want %v", keys, want)
		}
	})
}

// settling marks rec as the record of a create that recorded its cob
// intent in the store (ports.IdempotencyRecord.SettlesIntent).
func settling(rec *ports.IdempotencyRecord) *ports.IdempotencyRecord {
	rec.SettlesIntent = true
	return rec
}

// IdempotencyRecordOrIntent answers a used key's record and records
// nothing, and records the intent of an unused key (keeping an earlier
// one) and answers ErrNotFound.
func TestIdempotencyRecordOrIntent(t *testing.T) {
	onBothDatabases(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		scope := ports.Scope{AccountID: "acct_1", Mode: domain.ModeLive}
		c := newCharge(t, scope, baseTime, nil)
		want := idemRecord(scope, "used", c.ID())
		mustCreate(t, db, c, nil, want)
		intent := func(k, txid string) ports.ProviderIntent {
			return ports.ProviderIntent{Key: ports.IdempotencyKey{Scope: scope, Key: k}, TxID: txid, CreatedAt: baseTime}
		}
		rec, err := db.IdempotencyRecordOrIntent(ctx, intent("used", "txused"))
		if err != nil || rec.ResourceID != c.ID() || rec.Fingerprint != want.Fingerprint || rec.StatusCode != want.StatusCode || string(rec.Body) != string(want.Body) {
			t.Fatalf("used key: %+v, %v", rec, err)
		}
		for _, txid := range []string{"txfirst", "txretry"} {
			if rec, err := db.IdempotencyRecordOrIntent(ctx, intent("fresh", txid)); !errors.Is(err, ports.ErrNotFound) || rec != nil {
				t.Fatalf("fresh key: %+v, %v, want ErrNotFound", rec, err)
			}
		}
		got, err := db.ProviderIntentsBefore(ctx, baseTime.Add(time.Hour), 10)
		if err != nil || len(got) != 1 || got[0].Key.Key != "fresh" || got[0].TxID != "txfirst" {
			t.Fatalf("intents: %+v, %v; want only fresh's first", got, err)
		}
	})
}

// Concurrent checks share batches on Postgres (coalesce.go) and each gets
// its own answer: a used key its record, a fresh key ErrNotFound with its
// intent recorded.
func TestConcurrentIdempotencyRecordOrIntent(t *testing.T) {
	onBothDatabases(t, func(t *testing.T, db *store.DB) {
		scope := ports.Scope{AccountID: "acct_1", Mode: domain.ModeLive}
		const n = 40
		used := map[string]string{} // key → charge id
		for i := range n / 4 {
			c := newCharge(t, scope, baseTime, nil)
			k := fmt.Sprint("used-", i)
			mustCreate(t, db, c, nil, idemRecord(scope, k, c.ID()))
			used[k] = c.ID()
		}
		var wg sync.WaitGroup
		for i := range n {
			k := fmt.Sprint("fresh-", i)
			if i%2 == 0 {
				k = fmt.Sprint("used-", i/4)
			}
			wg.Go(func() {
				rec, err := db.IdempotencyRecordOrIntent(context.Background(), ports.ProviderIntent{
					Key: ports.IdempotencyKey{Scope: scope, Key: k}, TxID: "tx" + k, CreatedAt: baseTime})
				if id, ok := used[k]; ok {
					if err != nil || rec.ResourceID != id {
						t.Errorf("%s: %+v, %v; want the record of %s", k, rec, err, id)
					}
				} else if !errors.Is(err, ports.ErrNotFound) || rec != nil {
					t.Errorf("%s: %+v, %v; want ErrNotFound", k, rec, err)
				}
			})
		}
		wg.Wait()
		got, err := db.ProviderIntentsBefore(context.Background(), baseTime.Add(time.Hour), 100)
		if err != nil || len(got) != n/2 {
			t.Fatalf("%d intents, %v; want one per fresh key (%d)", len(got), err, n/2)
		}
		for _, in := range got {
			if _, ok := used[in.Key.Key]; ok || in.TxID != "tx"+in.Key.Key {
				t.Errorf("intent %+v", in)
			}
		}
	})
}

// onBothDatabases runs test in parallel subtests on a store of its own on
// SQLite and on Postgres.
func onBothDatabases(t *testing.T, test func(t *testing.T, db *store.DB)) {
	t.Parallel()
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": testenv.SQLiteDSN, "postgres": testenv.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			test(t, openStore(t, dsn(t)))
		})
	}
}
