package wiring

import (
	"log/slog"
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
	payouts *app.PayoutService,
) *app.WorkerRunner {
	ws := []app.Worker{
		{Name: "expiry", Interval: time.Second, Tick: charges.ExpireDue},
		{Name: "overdue", Interval: time.Minute, Tick: charges.NotifyOverdue},
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
		{Name: "releases", Interval: 10 * time.Second, Tick: payments.ReleaseDue},
		// Creates finalize their method data in the background at once;
		// this only catches what a crash or a failed acquirer call left.
		{Name: "methods", Interval: time.Second, IdleInterval: 10 * time.Second, Tick: payments.FinalizePendingMethods},
		{Name: "orphan-cobs", Interval: time.Minute, Tick: charges.SweepOrphanCobs},
		// Charge counter deltas (creates, status changes) are folded into
		// the totals a few times a second under load, when this process
		// commits them, and on a slow poll for what other processes left.
		{Name: "stats-fold", Interval: 250 * time.Millisecond, IdleInterval: 10 * time.Second,
			MinGap: 250 * time.Millisecond, Tick: db.FoldChargeStats, Wake: db.Wake(store.SignalStats)},
	}
	if cfg.Acquirer == AcquirerBCBPix {
		ws = append(ws, app.Worker{Name: "pix-reconciliation", Interval: time.Minute, Tick: receipts.Reconcile})
	}
	ws = append(ws, app.Worker{Name: "dashboard-housekeeping", Interval: time.Minute, Tick: dash.Janitor.Sweep},
		app.Worker{Name: "events-housekeeping", Interval: time.Minute, Tick: events.Prune})
	return app.NewWorkerRunner(log, ws...)
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
