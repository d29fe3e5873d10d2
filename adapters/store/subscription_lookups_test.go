package store_test

import (
	"errors"
	"testing"

	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// The PSP's callbacks name a rec or a cobr's txid: each is found in its
// scope only.
func TestSubscriptionLookups(t *testing.T) {
	t.Parallel()
	for _, d := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"postgres", testenv.PostgresDSN}, {"sqlite", testenv.SQLiteDSN}} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			db := openStore(t, d.dsn(t))
			ctx := t.Context()
			s := newSubscription(t, liveA, nil)
			recID := s.Mandate().RecID
			if recID == "" {
				t.Fatal("the test subscription has no rec")
			}
			mustCreateSubscription(t, db, s)
			if id, err := db.FindSubscriptionByRecID(ctx, liveA, recID); err != nil || id != s.ID() {
				t.Errorf("by rec: %q %v", id, err)
			}
			authorized(t, db, liveA, s.ID())
			if _, err := scheduleNext(ctx, t, db, liveA, s.ID()); err != nil {
				t.Fatal(err)
			}
			c, err := db.GetCycle(ctx, liveA, s.ID(), 1)
			if err != nil {
				t.Fatal(err)
			}
			if ref, err := db.FindCycleByTxID(ctx, liveA, c.TxID()); err != nil || ref.SubscriptionID != s.ID() || ref.Cycle != 1 || ref.Scope != liveA {
				t.Errorf("by txid: %+v %v", ref, err)
			}
			for name, err := range map[string]error{
				"rec in the other mode": func() error { _, err := db.FindSubscriptionByRecID(ctx, testA, recID); return err }(),
				"an unknown rec": func() error {
					_, err := db.FindSubscriptionByRecID(ctx, liveA, "RR999999992027010000000000000")
					return err
				}(),
				"no rec":                 func() error { _, err := db.FindSubscriptionByRecID(ctx, liveA, ""); return err }(),
				"txid in the other mode": func() error { _, err := db.FindCycleByTxID(ctx, testA, c.TxID()); return err }(),
				"an unknown txid":        func() error { _, err := db.FindCycleByTxID(ctx, liveA, "unknown0000000000000000000"); return err }(),
			} {
				if !errors.Is(err, ports.ErrNotFound) {
					t.Errorf("%s: %v, want ErrNotFound", name, err)
				}
			}
		})
	}
}
