package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Topics of commit signals: what kind of work a commit made due.
const (
	// SignalEvents: outbox events were committed (the webhook dispatcher).
	SignalEvents = "events"
	// SignalRefunds: refunds were created or changed (the refund worker).
	SignalRefunds = "refunds"
	// SignalPayouts: payouts were created (the payout worker).
	SignalPayouts = "payouts"
	// SignalStats: charge counter deltas were committed by this process
	// (the stats fold; never announced to other processes, whose own
	// commits wake their own fold).
	SignalStats = "stats"
)

// signalChannel is the Postgres NOTIFY channel of commit signals; the
// payload is "<topic>:<process>", so a process ignores its own.
const signalChannel = "quita_wake"

// ListenerApplicationName names the listener's session in
// pg_stat_activity: the one connection of a quitad that stays open while
// it is idle (and comes back on its own after a disconnect).
const ListenerApplicationName = "quita-listen"

// notifyGap is the shortest time between two NOTIFYs of a process: under
// load the signals of many commits go out as one, at most 1/notifyGap
// statements a second, none when idle. NOTIFY is sent after the commit,
// on its own statement, never inside a write's transaction (a notifying
// commit takes a database-wide lock that would serialize the creates).
const notifyGap = 20 * time.Millisecond

// signals wakes the workers of this process when it commits work, and
// those of the other processes on the database through LISTEN/NOTIFY
// (Postgres only), so idle workers need not poll the database often.
// Signals are hints: workers keep a slow safety poll.
type signals struct {
	process string

	mu    sync.Mutex
	subs  map[string][]chan struct{}
	dirty map[string]bool // topics to announce to the other processes
	kick  chan struct{}

	stop    context.CancelFunc
	stopped sync.WaitGroup
}

func newSignals() *signals {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return &signals{process: hex.EncodeToString(b), subs: map[string][]chan struct{}{},
		dirty: map[string]bool{}, kick: make(chan struct{}, 1), stop: func() {}}
}

// subscribe returns a channel that receives (coalesced) each time work of
// topic is committed, here or, on Postgres, by another process.
func (s *signals) subscribe(topic string) <-chan struct{} {
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	s.subs[topic] = append(s.subs[topic], ch)
	s.mu.Unlock()
	return ch
}

// local wakes this process's subscribers of topic.
func (s *signals) local(topic string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range s.subs[topic] {
		select {
		case ch <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
}

// committed announces work of topic this process has just committed.
func (s *signals) committed(topic string) {
	s.local(topic)
	s.mu.Lock()
	s.dirty[topic] = true
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// startPostgres runs the notifier (on pool connections) and the listener
// (on a connection of its own) until close.
func (s *signals) startPostgres(pool *pgxpool.Pool, cfg *pgx.ConnConfig) {
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	s.stopped.Go(func() { s.notifier(ctx, pool) })
	s.stopped.Go(func() { s.listener(ctx, cfg) })
}

func (s *signals) close() {
	s.stop()
	s.stopped.Wait()
}

// notifier sends one NOTIFY per dirty topic, at most every notifyGap. A
// failed NOTIFY is dropped: the other processes' safety polls cover it.
func (s *signals) notifier(ctx context.Context, pool *pgxpool.Pool) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
		}
		s.mu.Lock()
		topics := make([]string, 0, len(s.dirty))
		for t := range s.dirty {
			topics = append(topics, t)
		}
		clear(s.dirty)
		s.mu.Unlock()
		for _, t := range topics {
			nctx, cancel := context.WithTimeout(ctx, time.Second)
			_, _ = pool.Exec(nctx, "SELECT pg_notify($1, $2)", signalChannel, t+":"+s.process)
			cancel()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(notifyGap):
		}
	}
}

// listener LISTENs on its own connection and turns the other processes'
// notifications into local wake-ups. After a (re)connect every topic is
// woken once: notifications sent while it was away are lost.
func (s *signals) listener(ctx context.Context, cfg *pgx.ConnConfig) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := s.listen(ctx, cfg)
		if ctx.Err() != nil {
			return
		}
		_ = err // the safety polls cover the gap; reconnect with backoff
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func (s *signals) listen(ctx context.Context, cfg *pgx.ConnConfig) error {
	cfg = cfg.Copy()
	cfg.RuntimeParams["application_name"] = ListenerApplicationName
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+signalChannel); err != nil {
		return err
	}
	for _, t := range []string{SignalEvents, SignalRefunds, SignalPayouts} {
		s.local(t)
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		topic, process, ok := strings.Cut(n.Payload, ":")
		if ok && process != s.process {
			s.local(topic)
		}
	}
}

// Wake returns a channel that receives each time work of topic
// (SignalEvents, SignalRefunds, SignalPayouts, SignalStats) is committed by this process or, on
// Postgres, by another process on the same database. Wake-ups coalesce:
// one receive may stand for many commits.
func (db *DB) Wake(topic string) <-chan struct{} { return db.signals.subscribe(topic) }
