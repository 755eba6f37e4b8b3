package serve

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are GET /metrics: a registry of the server's own (no process or
// Go runtime collectors: the service's numbers only).
type metrics struct {
	reg      *prometheus.Registry
	runs     *prometheus.CounterVec
	duration prometheus.Histogram
	calls    *prometheus.CounterVec
	refused  *prometheus.CounterVec
}

func newMetrics(s *Server) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apysup_runs_total",
			Help: "Runs finished, by RunResult status."}, []string{"status"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "apysup_run_duration_seconds",
			Help:    "Time from admission to result, queueing included.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apysup_host_calls_total",
			Help: "Host calls of finished runs, by receipt outcome."}, []string{"outcome"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apysup_requests_refused_total",
			Help: "API requests refused, by error_code."}, []string{"code"}),
	}
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	counter := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f)
	}
	m.reg.MustRegister(m.runs, m.duration, m.calls, m.refused,
		gauge("apysup_runs_in_flight", "Runs running now.", func() float64 { r, _ := s.counts(); return float64(r) }),
		gauge("apysup_queue_depth", "Runs admitted and waiting for a slot.", func() float64 { _, q := s.counts(); return float64(q) }),
		gauge("apysup_pool_ready", "Native sandboxes started and waiting for a run.", func() float64 { return float64(s.sup.PoolState().Ready) }),
		counter("apysup_pool_started_total", "Native sandboxes the pool started and saw ready.", func() float64 { return float64(s.sup.PoolState().Started) }),
		counter("apysup_pool_taken_total", "Runs that took a pooled sandbox.", func() float64 { return float64(s.sup.PoolState().Taken) }),
		counter("apysup_pool_discarded_total", "Pooled sandboxes found dead and destroyed unused.", func() float64 { return float64(s.sup.PoolState().Discarded) }),
		counter("apysup_pool_expired_total", "Pooled sandboxes destroyed unused after the idle time.", func() float64 { return float64(s.sup.PoolState().Expired) }),
		gauge("apysup_wazero_pool_ready", "wazero child processes loaded and waiting for a run.", func() float64 { return float64(s.sup.WazeroPoolState().Ready) }),
		counter("apysup_wazero_pool_loaded_total", "wazero child processes the pool loaded.", func() float64 { return float64(s.sup.WazeroPoolState().Loaded) }),
		counter("apysup_wazero_pool_taken_total", "Runs that took a pooled wazero child.", func() float64 { return float64(s.sup.WazeroPoolState().Taken) }),
		counter("apysup_wazero_pool_discarded_total", "Pooled wazero children found dead while idle.", func() float64 { return float64(s.sup.WazeroPoolState().Discarded) }),
		counter("apysup_wazero_pool_expired_total", "Pooled wazero children killed unused after the idle time.", func() float64 { return float64(s.sup.WazeroPoolState().Expired) }),
		gauge("apysup_approvals_pending", "Approval requests waiting for a decision.", func() float64 { return float64(len(s.pendingApprovals())) }),
	)
	return m
}

func (m *metrics) observe(res *RunResult, d time.Duration) {
	m.runs.WithLabelValues(string(res.Status)).Inc()
	m.duration.Observe(d.Seconds())
	for _, rc := range res.Receipts {
		m.calls.WithLabelValues(rc.Outcome).Inc()
	}
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
