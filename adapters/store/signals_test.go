package store_test

import (
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

func waitWake(t *testing.T, ch <-chan struct{}, within time.Duration, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(within):
		t.Fatalf("%s: no wake-up within %s", what, within)
	}
}

func noWake(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatalf("%s: woken although nothing of the topic committed", what)
	case <-time.After(100 * time.Millisecond):
	}
}

// drain empties a wake channel of what earlier steps (or a listener's
// first connect) left.
func drain(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		case <-time.After(300 * time.Millisecond):
			return
		}
	}
}

// TestCommitSignalsWakeOtherProcesses: a charge with events committed
// through one store wakes SignalEvents subscribers of that store at once
// and of another store on the same Postgres database (another quitad)
// through LISTEN/NOTIFY, and not those of another topic. A charge without
// events wakes nobody.
func TestCommitSignalsWakeOtherProcesses(t *testing.T) {
	t.Parallel()
	dsn := testenv.PostgresDSN(t)
	a, b := openStore(t, dsn), openStore(t, dsn)
	localEvents, remoteEvents := a.Wake(store.SignalEvents), b.Wake(store.SignalEvents)
	remoteRefunds := b.Wake(store.SignalRefunds)
	drain(localEvents)
	drain(remoteEvents)
	drain(remoteRefunds)

	scope := ports.Scope{AccountID: "acct_sig", Mode: domain.ModeTest}
	now := time.Now()
	c := newCharge(t, scope, now, nil)
	mustCreate(t, a, c, chargeEvents(t, c, "", domain.CreationEvents(), now), idemRecord(scope, "sig-key-1", c.ID()))
	waitWake(t, localEvents, time.Second, "same process, events")
	waitWake(t, remoteEvents, 5*time.Second, "other process, events")
	noWake(t, remoteRefunds, "other process, refunds")

	// A charge without events wakes nobody.
	drain(remoteEvents)
	quiet := newCharge(t, scope, now, nil)
	mustCreate(t, a, quiet, nil, nil)
	noWake(t, remoteEvents, "charge without events")
}

// TestCommitSignalsInProcessOnSQLite: without Postgres the signals stay
// in the process, and still wake its workers.
func TestCommitSignalsInProcessOnSQLite(t *testing.T) {
	t.Parallel()
	db := openStore(t, testenv.SQLiteDSN(t))
	events := db.Wake(store.SignalEvents)
	scope := ports.Scope{AccountID: "acct_sig", Mode: domain.ModeTest}
	now := time.Now()
	c := newCharge(t, scope, now, nil)
	noWake(t, events, "before any commit")
	mustCreate(t, db, c, chargeEvents(t, c, "", domain.CreationEvents(), now), nil)
	waitWake(t, events, time.Second, "events")
}

// A payout's create wakes the payout worker and the webhook dispatcher,
// and its status change the dispatcher, at once (before, its events waited
// for the dispatcher's 10 s safety poll).
func TestPayoutCommitsSignal(t *testing.T) {
	t.Parallel()
	for name, dsn := range map[string]func(testing.TB) string{"sqlite": testenv.SQLiteDSN, "postgres": testenv.PostgresDSN} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := openStore(t, dsn(t))
			scope := ports.Scope{AccountID: "acct_sig_po", Mode: domain.ModeTest}
			fund(t, db, scope, 10_000)
			payouts, events := db.Wake(store.SignalPayouts), db.Wake(store.SignalEvents)
			drain(events)
			drain(payouts)
			p := newPayout(t, scope, 1000, 0, time.Now())
			if err := createPayout(db, p, nil); err != nil {
				t.Fatal(err)
			}
			waitWake(t, payouts, time.Second, "payouts after a create")
			waitWake(t, events, time.Second, "events after a create")
			if err := move(t, db, scope, p.ID(), func(p *domain.Payout) error { return p.Cancel(time.Now()) }); err != nil {
				t.Fatal(err)
			}
			waitWake(t, events, time.Second, "events after a status change")
		})
	}
}
