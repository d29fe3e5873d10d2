package app_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/mocks"
	"github.com/quitapix/quita/ports"
)

// The writer never blocks a request: past its buffer it drops and counts;
// it writes in batches; Close writes everything still queued.
func TestRequestLogWriterIsBoundedAndFlushesOnClose(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var batches [][]ports.RequestLogEntry
	release := make(chan struct{})
	store := &mocks.RequestLogStoreMock{InsertRequestLogsFunc: func(_ context.Context, es []ports.RequestLogEntry) error {
		<-release // hold the writer until the buffer has filled
		mu.Lock()
		batches = append(batches, es)
		mu.Unlock()
		return nil
	}}
	w := app.NewRequestLogWriter(store, slog.New(slog.NewTextHandler(io.Discard, nil)),
		app.RequestLogConfig{Buffer: 10, Batch: 4, Interval: time.Hour})
	for i := range 15 {
		w.Record(ports.RequestLogEntry{RequestID: string(rune('a' + i))})
	}
	// The batch-full kick may have taken up to 4 entries out of the buffer
	// before it blocked, making room for up to 4 more.
	if d := w.Dropped(); d < 1 || d > 5 {
		t.Fatalf("dropped %d, want 1..5", d)
	}
	close(release)
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for _, b := range batches {
		if len(b) > 4 {
			t.Errorf("batch of %d, want ≤ 4", len(b))
		}
		total += len(b)
	}
	if int64(total)+w.Dropped() != 15 {
		t.Errorf("written %d + dropped %d != 15", total, w.Dropped())
	}
	w.Record(ports.RequestLogEntry{RequestID: "late"})
	if int64(total)+w.Dropped() != 16 {
		t.Error("a record after Close was neither dropped nor written")
	}
}
