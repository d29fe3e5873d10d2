package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/mocks"
)

func TestDashboardJanitorCutoffs(t *testing.T) {
	t.Parallel()
	store := &mocks.DashboardHousekeepingMock{
		DeleteExpiredTokensFunc:         func(context.Context, time.Time, int) (int, error) { return 2, nil },
		DeleteRequestLogsBeforeFunc:     func(context.Context, time.Time, int) (int, error) { return 3, nil },
		DeletePayerAdmissionsBeforeFunc: func(context.Context, time.Time, int) (int, error) { return 4, nil },
		EnsurePartitionsFunc:            func(context.Context) (int, error) { return 1, nil },
	}
	j := app.NewDashboardJanitor(store, &mocks.ClockMock{NowFunc: func() time.Time { return t0 }}, app.JanitorConfig{})
	n, err := j.Sweep(context.Background())
	if err != nil || n != 10 {
		t.Fatalf("sweep %d %v", n, err)
	}
	if c := store.DeletePayerAdmissionsBeforeCalls(); len(c) != 1 || !c[0].T.Equal(t0.Add(-2*time.Hour)) || c[0].Limit <= 0 {
		t.Errorf("velocity admissions %+v", c)
	}
	if c := store.DeleteExpiredTokensCalls(); len(c) != 1 || !c[0].Now.Equal(t0) || c[0].Limit <= 0 {
		t.Errorf("tokens %+v", c)
	}
	if c := store.DeleteRequestLogsBeforeCalls(); len(c) != 1 || !c[0].T.Equal(t0.Add(-30*24*time.Hour)) {
		t.Errorf("request logs %+v", c)
	}
	if c := store.EnsurePartitionsCalls(); len(c) != 1 {
		t.Errorf("the sweep made the months ahead %d times, want once", len(c))
	}
}
