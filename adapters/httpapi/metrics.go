package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/ports"
)

// httpMetrics are the HTTP layer's Prometheus series. Each handler has its
// own registry, so several servers in one process (tests) never collide.
type httpMetrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newHTTPMetrics() *httpMetrics {
	reg := prometheus.NewRegistry()
	m := &httpMetrics{
		registry: reg,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "quita_http_requests_total",
			Help: "HTTP requests by method, route template and status code.",
		}, []string{"method", "route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "quita_http_request_duration_seconds",
			Help:    "HTTP request latency by method and route template.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"method", "route"}),
	}
	reg.MustRegister(m.requests, m.duration, collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// watchPayouts exports the payout worker's alerts of this process as
// quita_payout_alerts_total{kind} (app.PayoutAlerts says what each kind
// means; docs/payouts.md what an operator does).
func (m *httpMetrics) watchPayouts(p *app.PayoutService) {
	const help = "Payout alerts an operator must look at, by kind (docs/payouts.md)."
	for kind, read := range map[string]func(app.PayoutAlerts) uint64{
		"blocked":            func(a app.PayoutAlerts) uint64 { return a.Blocked },
		"send_unresolved":    func(a app.PayoutAlerts) uint64 { return a.Unresolved },
		"paid_after_release": func(a app.PayoutAlerts) uint64 { return a.PaidAfterRelease },
	} {
		m.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "quita_payout_alerts_total", Help: help,
			ConstLabels: prometheus.Labels{"kind": kind}}, func() float64 { return float64(read(p.Alerts())) }))
	}
}

// watchCreateFlight exposes the create flight of this process (every
// create waits on its one flight to the database): the rate of
// quita_store_create_flight_seconds_total is its utilization, and creates
// over batches the batch size (docs/operations.md).
func (m *httpMetrics) watchCreateFlight(stats func() ports.FlightStats) {
	counter := func(name, help string, v func(ports.FlightStats) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return v(stats()) })
	}
	m.registry.MustRegister(
		counter("quita_store_create_batches_total", "Create batches written to the database, one transaction each.",
			func(s ports.FlightStats) float64 { return float64(s.Batches) }),
		counter("quita_store_create_batched_total", "Creates the create batches carried.",
			func(s ports.FlightStats) float64 { return float64(s.Creates) }),
		counter("quita_store_create_flight_seconds_total",
			"Seconds the create flight was busy; its rate near 1 means every create waits on it.",
			func(s ports.FlightStats) float64 { return s.Busy.Seconds() }),
	)
}

// watchReturns exposes the automatic-return counters of this process:
// a refused or surfaced return is something an operator must hear of.
func (m *httpMetrics) watchReturns(stats func() app.ReturnStats) {
	counter := func(name, help string, v func(app.ReturnStats) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return float64(v(stats())) })
	}
	m.registry.MustRegister(
		counter("quita_pix_returns_confirmed_total", "Automatic Pix returns (devoluções) the payer's bank credited.",
			func(s app.ReturnStats) uint64 { return s.Confirmed }),
		counter("quita_pix_return_attempts_refused_total", "Devolução attempts of automatic returns the payer's bank refused.",
			func(s app.ReturnStats) uint64 { return s.Refused }),
		counter("quita_pix_returns_failed_total",
			"Automatic Pix returns refused on every attempt and left for an operator (quitad returns).",
			func(s app.ReturnStats) uint64 { return s.Surfaced }),
		counter("quita_pix_returns_blocked_total",
			"Tries of automatic Pix returns the PSP refused for Quita's credentials or the account's configuration "+
				"(retried until an operator fixes it: quitad acquirer configure).",
			func(s app.ReturnStats) uint64 { return s.Blocked }),
	)
}

// observe records one request. Only route templates become labels (an
// unmatched path is "unmatched"), so ids never multiply the series.
func (m *httpMetrics) observe(r *http.Request, status int, took time.Duration) {
	route := "unmatched"
	if cr := mux.CurrentRoute(r); cr != nil {
		if tpl, err := cr.GetPathTemplate(); err == nil {
			route = tpl
		}
	}
	m.requests.WithLabelValues(methodLabel(r.Method), route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(methodLabel(r.Method), route).Observe(took.Seconds())
}

// Routes registers GET /metrics in the Prometheus text format. It needs no
// key: serve it to the monitoring network only (see docs/decisions.md).
func (m *httpMetrics) Routes(r *mux.Router) {
	r.Handle("/metrics", promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})).Methods(http.MethodGet).Name("metrics")
}
