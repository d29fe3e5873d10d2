package app

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quitapix/quita/ports"
)

// RequestLogConfig tunes the request-log writer.
type RequestLogConfig struct {
	// Buffer bounds the entries waiting to be written (default 8192); when
	// it is full new entries are dropped and counted, never blocking a
	// request.
	Buffer int
	// Batch is the most entries one insert writes (default 256).
	Batch int
	// Interval is the longest an entry waits (default 250 ms).
	Interval time.Duration
}

// RequestLogWriter writes request logs in batches off the request path:
// Record only appends to a bounded buffer; a background goroutine inserts
// a batch when it is full or every Interval; Close writes what is left.
type RequestLogWriter struct {
	store ports.RequestLogStore
	log   *slog.Logger
	cfg   RequestLogConfig

	mu      sync.Mutex
	buf     []ports.RequestLogEntry
	closed  bool
	flushMu sync.Mutex // one insert at a time, in order
	kick    chan struct{}
	done    chan struct{}
	stopped chan struct{}
	dropped atomic.Int64
}

// NewRequestLogWriter starts a writer; Close stops it.
func NewRequestLogWriter(store ports.RequestLogStore, log *slog.Logger, cfg RequestLogConfig) *RequestLogWriter {
	if cfg.Buffer <= 0 {
		cfg.Buffer = 8192
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 256
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 250 * time.Millisecond
	}
	w := &RequestLogWriter{store: store, log: log, cfg: cfg, kick: make(chan struct{}, 1),
		done: make(chan struct{}), stopped: make(chan struct{})}
	go w.run()
	return w
}

// Record queues one entry. It never blocks; a full buffer drops the entry.
func (w *RequestLogWriter) Record(e ports.RequestLogEntry) {
	if w == nil {
		return
	}
	w.mu.Lock()
	if w.closed || len(w.buf) >= w.cfg.Buffer {
		w.mu.Unlock()
		w.dropped.Add(1)
		return
	}
	w.buf = append(w.buf, e)
	full := len(w.buf) >= w.cfg.Batch
	w.mu.Unlock()
	if full {
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
}

// Dropped counts entries lost to a full buffer or a failed insert.
func (w *RequestLogWriter) Dropped() int64 { return w.dropped.Load() }

func (w *RequestLogWriter) run() {
	defer close(w.stopped)
	t := time.NewTicker(w.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-w.done:
			return
		case <-t.C:
		case <-w.kick:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := w.Flush(ctx); err != nil {
			w.log.WarnContext(ctx, "request logs: write failed", "err", err)
		}
		cancel()
	}
}

// Flush writes every queued entry now.
func (w *RequestLogWriter) Flush(ctx context.Context) error {
	if w == nil {
		return nil
	}
	w.flushMu.Lock()
	defer w.flushMu.Unlock()
	for {
		w.mu.Lock()
		n := min(len(w.buf), w.cfg.Batch)
		batch := make([]ports.RequestLogEntry, n)
		copy(batch, w.buf)
		w.buf = append(w.buf[:0], w.buf[n:]...)
		w.mu.Unlock()
		if n == 0 {
			return nil
		}
		if err := w.store.InsertRequestLogs(ctx, batch); err != nil {
			// Logs are best effort: a failed batch is dropped and counted
			// rather than retried forever against a struggling database.
			w.dropped.Add(int64(n))
			return err
		}
	}
}

// Close stops the background writer and writes what is queued, within ctx.
func (w *RequestLogWriter) Close(ctx context.Context) error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	close(w.done)
	<-w.stopped
	return w.Flush(ctx)
}
