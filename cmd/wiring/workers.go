package wiring

import (
	"crypto/rand"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/app"
)

// provideWorkers is the schedule of quitad's periodic workers (the webhook
// dispatcher and delivery loop runs apart, woken by new events). An idle
// quitad stays under 5 queries a second: work committed in this
// process or another wakes its worker at once (the refund worker through
// the store's signals), so an idle worker backs off to a slow safety poll —
// except expiry, which is due by the clock.
func provideWorkers(cfg Config, log *slog.Logger, charges *app.ChargeService, payments *app.PaymentService,
	receipts *app.PixReceiptService, dash *Dashboard, events *app.EventService, db *store.DB,
	payouts *app.PayoutService, subs *app.SubscriptionService,
) *app.WorkerRunner {
	ws := []app.Worker{
		{Name: "expiry", Interval: time.Second, Tick: charges.ExpireDue, Exclusive: true},
		{Name: "overdue", Interval: time.Minute, Tick: charges.NotifyOverdue, Exclusive: true},
		// Automatic returns are sent when owed; this follows them until the
		// payer's bank answers and retries what it refused.
		{Name: "returns", Interval: 5 * time.Second, Tick: charges.AdvanceReturns},
		{Name: "refunds", Interval: 300 * time.Millisecond, IdleInterval: 10 * time.Second, Tick: payments.AdvanceRefunds,
			Wake: merge(payments.RefundsWake(), db.Wake(store.SignalRefunds))},
		// New payouts wake it (here or, by NOTIFY, in another process); it
		// backs off to 10 s while nothing is open, which also bounds how
		// late a processing payout's reconciliation can run.
		{Name: "payouts", Interval: time.Second, IdleInterval: 10 * time.Second, Tick: payouts.SendPayouts,
			Wake: merge(payouts.Wake(), db.Wake(store.SignalPayouts))},
		{Name: "releases", Interval: 10 * time.Second, Tick: payments.ReleaseDue, Exclusive: true},
		// Sub-accounts' automatic payouts: the first pass of each Brasília
		// day pays each one's live balance out, once (its idempotency key
		// is the day); the later passes of the day find none due.
		{Name: "auto-payouts", Interval: time.Minute, Tick: payouts.RunAutoPayouts, Exclusive: true},
		// Subscriptions (Pix Automático): mandates past their deadline,
		// cycles whose creation window opened (their charges), open cycles
		// to follow. What is due comes from the clock (a window opens at
		// midnight in Brasília), so it polls; an authorisation or an
		// amount set in this process wakes it.
		{Name: "subscriptions", Interval: 5 * time.Second, IdleInterval: 30 * time.Second, Tick: subs.RunSubscriptions,
			Wake: subs.Wake()},
		// Creates finalize their method data in the background at once;
		// this only catches what a crash or a failed acquirer call left.
		{Name: "methods", Interval: time.Second, IdleInterval: 10 * time.Second, Tick: payments.FinalizePendingMethods, Exclusive: true},
		{Name: "orphan-cobs", Interval: time.Minute, Tick: charges.SweepOrphanCobs, Exclusive: true},
		// A batch of charges is run at once by the process that accepted it;
		// this takes over what a crash, a timeout or a failure left.
		{Name: "charge-batches", Interval: time.Second, IdleInterval: 10 * time.Second, Tick: charges.ProcessChargeBatches},
		// Charge counter deltas (creates, status changes) are folded into
		// the totals a few times a second under load, when this process
		// commits them, and on a slow poll for what other processes left.
		{Name: "stats-fold", Interval: 250 * time.Millisecond, IdleInterval: 10 * time.Second,
			MinGap: 250 * time.Millisecond, Tick: db.FoldChargeStats, Wake: db.Wake(store.SignalStats)},
	}
	if cfg.Acquirer == AcquirerBCBPix {
		ws = append(ws, app.Worker{Name: "pix-reconciliation", Interval: time.Minute, Tick: receipts.Reconcile, Exclusive: true})
	}
	ws = append(ws, app.Worker{Name: "dashboard-housekeeping", Interval: time.Minute, Tick: dash.Janitor.Sweep, Exclusive: true},
		app.Worker{Name: "events-housekeeping", Interval: time.Minute, Tick: events.Prune, Exclusive: true})
	r := app.NewWorkerRunner(log, ws...)
	r.ShareExclusive(db, workerHolder(), app.SystemClock{})
	return r
}

// merge forwards wake-ups from both channels (coalesced) to one.
func merge(a, b <-chan struct{}) <-chan struct{} {
	out := make(chan struct{}, 1)
	fwd := func(in <-chan struct{}) {
		for range in {
			select {
			case out <- struct{}{}:
			default:
			}
		}
	}
	go fwd(a)
	go fwd(b)
	return out
}

// workerHolder names this process in the exclusive workers' leases: host,
// pid and a random suffix, unique across the deployment's processes and
// restarts.
func workerHolder() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s/%d/%x", host, os.Getpid(), b)
}
