package wiring

import (
	"log/slog"
	"time"

	"github.com/quitapix/quita/app"
)

// provideWorkers is the schedule of quitad's periodic workers (the webhook
// dispatcher and delivery loop runs apart, woken by new events).
func provideWorkers(cfg Config, log *slog.Logger, charges *app.ChargeService, payments *app.PaymentService,
	receipts *app.PixReceiptService, dash *Dashboard, events *app.EventService,
) *app.WorkerRunner {
	ws := []app.Worker{
		{Name: "expiry", Interval: time.Second, Tick: charges.ExpireDue},
		{Name: "returns", Interval: 5 * time.Second, Tick: charges.RetryReturns},
		{Name: "refunds", Interval: 300 * time.Millisecond, Tick: payments.AdvanceRefunds, Wake: payments.RefundsWake()},
		{Name: "releases", Interval: 10 * time.Second, Tick: payments.ReleaseDue},
		{Name: "methods", Interval: time.Second, Tick: payments.FinalizePendingMethods},
		{Name: "orphan-cobs", Interval: time.Minute, Tick: charges.SweepOrphanCobs},
	}
	if cfg.Acquirer == AcquirerBCBPix {
		ws = append(ws, app.Worker{Name: "pix-reconciliation", Interval: time.Minute, Tick: receipts.Reconcile})
	}
	ws = append(ws, app.Worker{Name: "dashboard-housekeeping", Interval: time.Minute, Tick: dash.Janitor.Sweep},
		app.Worker{Name: "events-housekeeping", Interval: time.Minute, Tick: events.Prune})
	return app.NewWorkerRunner(log, ws...)
}
