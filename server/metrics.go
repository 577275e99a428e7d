package server

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dtekit/dtekit/billing"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// CAFFolios is the folio count left in one CAF, for the
// dtekit_caf_folios_remaining gauge.
type CAFFolios struct {
	EmpresaID string
	TipoDTE   int
	CAFID     string
	Remaining int64
}

// metrics holds the server's Prometheus collectors, registered on a
// registry of its own (no global state).
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	emission prometheus.Histogram
}

// scrapeTimeout bounds the database queries behind the gauges.
const scrapeTimeout = 5 * time.Second

func newMetrics(folios func(context.Context) ([]CAFFolios, error), queue func(context.Context) (map[string]map[string]int64, error),
	counts func() billing.Counts, tenantLabels bool) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "dtekit_http_requests_total",
			Help: "HTTP requests by method, route pattern and status.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "dtekit_http_request_duration_seconds",
			Help:    "HTTP request latency by route pattern.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route"}),
		emission: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "dtekit_emission_duration_seconds",
			Help:    "Latency of successful DTE emissions through the API (201 answers, replays excluded).",
			Buckets: []float64{.005, .01, .02, .05, .1, .2, .5, 1, 2, 5},
		}),
	}
	m.registry.MustRegister(m.requests, m.duration, m.emission,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if folios != nil {
		c := &foliosCollector{fn: folios, desc: prometheus.NewDesc(
			"dtekit_caf_folios_remaining", "Folios not yet assigned, summed over the active CAFs of each document type.",
			[]string{"tipo_dte"}, nil)}
		if tenantLabels {
			c.perCAF = true
			c.desc = prometheus.NewDesc("dtekit_caf_folios_remaining", "Folios not yet assigned, per active CAF.",
				[]string{"empresa_id", "tipo_dte", "caf_id"}, nil)
		}
		m.registry.MustRegister(c)
	}
	if queue != nil {
		m.registry.MustRegister(&queueCollector{fn: queue, desc: prometheus.NewDesc(
			"dtekit_job_queue_depth", "Background jobs not finished, by queue and state, across every process on the database.",
			[]string{"queue", "state"}, nil)})
	}
	if counts != nil {
		m.registry.MustRegister(newCountsCollector(counts, tenantLabels))
	}
	return m
}

func (m *metrics) observeRequest(method, route string, status int, d time.Duration) {
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(route).Observe(d.Seconds())
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

type foliosCollector struct {
	fn   func(context.Context) ([]CAFFolios, error)
	desc *prometheus.Desc
	// perCAF labels each CAF's series with its company and id; otherwise
	// the folios are summed per document type and no tenant is named.
	perCAF bool
}

func (c *foliosCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *foliosCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	rows, err := c.fn(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	if c.perCAF {
		for _, r := range rows {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(r.Remaining),
				r.EmpresaID, strconv.Itoa(r.TipoDTE), r.CAFID)
		}
		return
	}
	sums := map[int]int64{}
	for _, r := range rows {
		sums[r.TipoDTE] += r.Remaining
	}
	for tipo, n := range sums {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), strconv.Itoa(tipo))
	}
}

type queueCollector struct {
	fn   func(context.Context) (map[string]map[string]int64, error)
	desc *prometheus.Desc
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	depth, err := c.fn(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	for queue, states := range depth {
		for state, n := range states {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(n), queue, state)
		}
	}
}

// countsCollector exports billing's outcome counters: the SII's reviews
// by final estado, failed webhook delivery attempts by category and the
// documents the mail job handled by outcome,
// summed over companies (every label present, zero until it happens), or
// per company with tenant labels.
type countsCollector struct {
	fn                                func() billing.Counts
	perTenant                         bool
	outcomes, failure, mails, answers *prometheus.Desc
}

func newCountsCollector(fn func() billing.Counts, perTenant bool) *countsCollector {
	labels := func(l string) []string {
		if perTenant {
			return []string{"empresa_id", l}
		}
		return []string{l}
	}
	return &countsCollector{fn: fn, perTenant: perTenant,
		outcomes: prometheus.NewDesc("dtekit_sii_outcomes_total",
			"Documents whose review by the SII this process settled, by final estado (aceptado, con_reparos: accepted with objections, rechazado).",
			labels("estado"), nil),
		failure: prometheus.NewDesc("dtekit_webhook_delivery_failures_total",
			"Failed webhook delivery attempts made by this process, scheduled and manual, by category (dns, refused, private_address, timeout, tls, http_status, request).",
			labels("category"), nil),
		mails: prometheus.NewDesc("dtekit_mail_documents_total",
			"Documents the mail job of this process handled, by where the receptor's address came from (cliente: the catalog's e-mail, contribuyentes: the SII's list) or why nothing was sent (sin_direccion: no address known, sin_remitente: the company has no mail settings).",
			labels("resultado"), nil),
		answers: prometheus.NewDesc("dtekit_mail_answers_total",
			"Answers to suppliers (acuse, resultado, recibos) this process recorded, by where the supplier's address came from (remitente: its file's sender or the upload's correo_emisor, contribuyentes: the SII's list) or why nothing was mailed (sin_direccion: no address known, sin_remitente: the company has no mail settings).",
			labels("resultado"), nil)}
}

func (c *countsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.outcomes
	ch <- c.failure
	ch <- c.mails
	ch <- c.answers
}

func (c *countsCollector) Collect(ch chan<- prometheus.Metric) {
	counts := c.fn()
	c.collect(ch, c.outcomes, billing.SIIOutcomeLabels(), counts.SIIOutcomes)
	c.collect(ch, c.failure, billing.DeliveryFailureLabels(), counts.DeliveryFailures)
	c.collect(ch, c.mails, billing.DocumentMailLabels(), counts.DocumentMails)
	c.collect(ch, c.answers, billing.AnswerMailLabels(), counts.AnswerMails)
}

func (c *countsCollector) collect(ch chan<- prometheus.Metric, desc *prometheus.Desc, known []string, counts []billing.Count) {
	if c.perTenant {
		for _, n := range counts {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(n.N), n.EmpresaID, n.Label)
		}
		return
	}
	sums := map[string]uint64{}
	for _, l := range known {
		sums[l] = 0
	}
	for _, n := range counts {
		sums[n.Label] += n.N
	}
	for l, n := range sums {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(n), l)
	}
}
