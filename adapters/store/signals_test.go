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
