package app

import (
	"context"
	"time"

	"github.com/quitapix/quita/ports"
)

// JanitorConfig tunes dashboard housekeeping.
type JanitorConfig struct {
	// RequestLogRetention is how long request logs are kept (default 30
	// days).
	RequestLogRetention time.Duration
}

// DashboardJanitor deletes logged-out tokens past their expiry and old
// request logs, and makes the history tables' partitions of the months
// ahead. Safe to run in every process at once.
type DashboardJanitor struct {
	store ports.DashboardHousekeeping
	clock ports.Clock
	cfg   JanitorConfig
}

// NewDashboardJanitor wires the janitor.
func NewDashboardJanitor(store ports.DashboardHousekeeping, clock ports.Clock, cfg JanitorConfig) *DashboardJanitor {
	if cfg.RequestLogRetention <= 0 {
		cfg.RequestLogRetention = 30 * 24 * time.Hour
	}
	return &DashboardJanitor{store: store, clock: clock, cfg: cfg}
}

// Sweep makes the missing partitions, deletes one batch of each kind and
// reports how many partitions were made and rows went.
func (j *DashboardJanitor) Sweep(ctx context.Context) (int, error) {
	now := j.clock.Now()
	made, err := j.store.EnsurePartitions(ctx)
	if err != nil {
		return made, err
	}
	n, err := j.store.DeleteExpiredTokens(ctx, now, 1000)
	if err != nil {
		return n, err
	}
	m, err := j.store.DeleteRequestLogsBefore(ctx, now.Add(-j.cfg.RequestLogRetention), 1000)
	if err != nil {
		return n + m, err
	}
	// The velocity guard looks one hour back.
	v, err := j.store.DeletePayerAdmissionsBefore(ctx, now.Add(-2*time.Hour), 1000)
	return made + n + m + v, err
}
