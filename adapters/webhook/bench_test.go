package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
)

// benchEngine is an engine on a fresh Postgres database with one endpoint
// (charge.created) on a local receiver that answers 204 at once.
func benchEngine(b *testing.B, onBody func([]byte)) *engine {
	b.Helper()
	db := openDB(b, testenv.PostgresDSN(b))
	clock := app.SystemClock{}
	e := &engine{db: db, clock: clock}
	e.svc = newService(db, clock, app.WebhooksConfig{Workers: 4, ClaimBatch: 64, PollInterval: 50 * time.Millisecond})
	e.acct, e.scope = newAccount(b, db, clock.Now())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if onBody != nil {
			onBody(body)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(srv.Close)
	if _, err := e.svc.CreateEndpoint(context.Background(), app.Caller{Account: e.acct, Mode: e.scope.Mode},
		app.EndpointInput{URL: srv.URL, Events: []string{"charge.created"}}); err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkDeliveryThroughput: outbox events → deliveries → 2xx on a local
// receiver, on Postgres, with one process's workers (4 × 64 in flight).
// Reports deliveries/s.
func BenchmarkDeliveryThroughput(b *testing.B) {
	e := benchEngine(b, nil)
	const perRound = 3000
	ctx := context.Background()
	var total int
	var elapsed time.Duration
	for b.Loop() {
		b.StopTimer()
		seedCharges(b, e, perRound)
		b.StartTimer()
		start := time.Now()
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { e.svc.Run(runCtx); close(done) }()
		total += perRound
		for {
			st, err := e.db.DeliveryStats(ctx, e.scope)
			if err != nil {
				b.Fatal(err)
			}
			if st[domain.DeliveryDelivered] >= total {
				break
			}
			time.Sleep(25 * time.Millisecond)
		}
		elapsed += time.Since(start)
		stop()
		<-done
	}
	b.ReportMetric(float64(total)/elapsed.Seconds(), "deliveries/s")
}

// seedCharges writes n charges with their events from 16 writers.
func seedCharges(b *testing.B, e *engine, n int) {
	var wg sync.WaitGroup
	per := n / 16
	for w := range 16 {
		k := per
		if w == 15 {
			k = n - 15*per
		}
		wg.Go(func() {
			for range k {
				e.charge(b, "")
			}
		})
	}
	wg.Wait()
}

// BenchmarkCommitToFirstAttempt: charges committed at 200 events/s while
// the workers run; the latency from each commit to the receiver seeing
// the charge.created delivery. Reports p50 and p99 in ms.
func BenchmarkCommitToFirstAttempt(b *testing.B) {
	var (
		mu      sync.Mutex
		arrived = map[string]time.Time{}
	)
	e := benchEngine(b, func(body []byte) {
		var env struct {
			Data struct {
				Object struct {
					ID string `json:"id"`
				} `json:"object"`
			} `json:"data"`
		}
		_ = json.Unmarshal(body, &env)
		mu.Lock()
		if _, ok := arrived[env.Data.Object.ID]; !ok {
			arrived[env.Data.Object.ID] = time.Now()
		}
		mu.Unlock()
	})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.svc.Run(ctx); close(done) }()
	defer func() { stop(); <-done }()

	const rate = 200
	const seconds = 5
	committed := map[string]time.Time{}
	var lat []time.Duration
	for b.Loop() {
		tick := time.NewTicker(time.Second / rate)
		var cmu sync.Mutex
		var wg sync.WaitGroup
		for range rate * seconds {
			<-tick.C
			wg.Go(func() {
				c := e.charge(b, "")
				at := time.Now()
				cmu.Lock()
				committed[domain.PrefixCharge+c.ID()] = at
				cmu.Unlock()
			})
		}
		tick.Stop()
		wg.Wait()
		deadline := time.Now().Add(30 * time.Second)
		for {
			mu.Lock()
			n := len(arrived)
			mu.Unlock()
			if n >= len(committed) || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	mu.Lock()
	for id, at := range committed {
		if got, ok := arrived[id]; ok {
			lat = append(lat, got.Sub(at))
		}
	}
	mu.Unlock()
	if len(lat) < len(committed) {
		b.Fatalf("%d of %d charges never reached the receiver", len(committed)-len(lat), len(committed))
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}
