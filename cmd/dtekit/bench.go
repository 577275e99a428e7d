package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/dtekit/dtekit/dte"
)

const benchUsage = `usage: dtekit bench --url URL[,URL...] --key KEY [--duration 30s] [--concurrency 8] [--tipo 33] [--pid PID[,PID...]] [--json]

A load test against a running "dtekit serve": for --duration, --concurrency
workers emit documents of --tipo through POST /api/v1/billing/dte (a fresh
Idempotency-Key each), and bench reports documents per second, the latency
of the emissions answered 201 (p50, p99, max), the errors (by status, and
calls that got no answer) and the server's CPU time per document.

--url takes the server's base URL (http://127.0.0.1:8080); several, separated
by commas, spread the workers over instances that share one database. --key
is a write API key of the company that emits ("Bearer TOKEN" for a token).
With "dtekit serve --demo" the key is in the data directory's demo.json:

    KEY=$(sed -n 's/.*"api_key": "\(dtk_[^"]*\)".*/\1/p' dtekit-data/demo.json | head -1)
    dtekit bench --url http://127.0.0.1:8080 --key "$KEY" --duration 30s --concurrency 8

The documents are the demo's requests (dtekit demo) with auto_send false, so
the figures are those of emission (validation, folio, stamp, signature, two
short transactions) and not of the SII's answers; --auto-send submits them
too. Each document takes a folio of the company's CAF: a long run needs a CAF
with room (the demo's have 100000 folios per type).

The server's CPU is the CPU time its process used during the run (user and
system), divided by the documents emitted: read from /proc/PID/stat when
--pid names the server's processes (same machine), else from each server's
/metrics (process_cpu_seconds_total, the process's own reading of the same
counters). Work the server does after the run (webhooks, submission) is not
counted.
`

// benchMaxDuration and benchMaxWorkers bound a run: its latencies are
// kept in memory (8 bytes a document).
const (
	benchMaxDuration = time.Hour
	benchMaxWorkers  = 256
)

// benchReport is what bench prints (--json: as is).
type benchReport struct {
	Servers     int            `json:"servers"`
	Workers     int            `json:"concurrency"`
	TipoDTE     int            `json:"tipo_dte"`
	Seconds     float64        `json:"seconds"`
	Documents   int            `json:"documents"`
	PerSecond   float64        `json:"documents_per_second"`
	P50ms       float64        `json:"p50_ms"`
	P99ms       float64        `json:"p99_ms"`
	MaxMs       float64        `json:"max_ms"`
	Errors      int            `json:"errors"`
	ErrorsBy    map[string]int `json:"errors_by,omitempty"` // status code, or "no answer"
	FirstError  string         `json:"first_error,omitempty"`
	CPUSeconds  *float64       `json:"server_cpu_seconds"`         // nil: not readable
	CPUPerDocMs *float64       `json:"server_cpu_ms_per_document"` // nil: not readable or no document
	CPUSource   string         `json:"server_cpu_source"`
}

func runBench(ctx context.Context, env *cmdEnv, args []string) int {
	fs := newFlagSet(env, "bench")
	urls := fs.String("url", "", "base URL of the server, or several separated by commas (required)")
	key := fs.String("key", "", `write API key of the emitting company, or "Bearer TOKEN" (required)`)
	duration := fs.Duration("duration", 30*time.Second, "how long to emit (at most 1h)")
	workers := fs.Int("concurrency", 8, "emissions in flight at once (1 to 256)")
	tipo := fs.Int("tipo", 33, "document type to emit (one of the demo's twelve)")
	pids := fs.String("pid", "", "the servers' process ids, separated by commas, to read their CPU from /proc (same machine)")
	autoSend := fs.Bool("auto-send", false, "emit with auto_send: the server also submits each document to its SII")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	pos, code, ok := parseFlags(env, fs, benchUsage, args, "url", "key")
	if !ok {
		return code
	}
	if len(pos) > 0 {
		return usageError(env, "bench", "unexpected arguments %q", pos)
	}
	if *duration <= 0 || *duration > benchMaxDuration {
		return usageError(env, "bench", "--duration %s: want more than 0 and at most 1h", *duration)
	}
	if *workers < 1 || *workers > benchMaxWorkers {
		return usageError(env, "bench", "--concurrency %d: want 1 to %d", *workers, benchMaxWorkers)
	}
	bases, err := benchURLs(*urls)
	if err != nil {
		return usageError(env, "bench", "--url: %v", err)
	}
	procs, err := benchPIDs(*pids)
	if err != nil {
		return usageError(env, "bench", "--pid: %v", err)
	}
	body, err := benchRequest(*tipo, *autoSend)
	if err != nil {
		return usageError(env, "bench", "--tipo %d: %v", *tipo, err)
	}
	rep, err := bench(ctx, benchConfig{bases: bases, key: *key, duration: *duration, workers: *workers, body: body, pids: procs})
	if err != nil {
		fmt.Fprintf(env.stderr, "dtekit bench: %s\n", errLine(err))
		return exitFail
	}
	rep.TipoDTE = *tipo
	if *jsonOut {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return exitFail
		}
	} else {
		printBench(env.stdout, rep)
	}
	if rep.Documents == 0 {
		fmt.Fprintf(env.stderr, "dtekit bench: no document was emitted (%d errors; first: %s)\n", rep.Errors, rep.FirstError)
		return exitFail
	}
	return exitOK
}

// benchURLs reads --url: http(s) base URLs, the API's path added later.
func benchURLs(s string) ([]string, error) {
	var out []string
	for _, u := range strings.Split(s, ",") {
		u = strings.TrimRight(strings.TrimSpace(u), "/")
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return nil, fmt.Errorf("%q is not an http:// or https:// base URL", u)
		}
		out = append(out, u)
	}
	return out, nil
}

// benchPIDs reads --pid.
func benchPIDs(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q is not a process id", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// benchRequest is the body bench posts: the demo's request of the type.
func benchRequest(tipo int, autoSend bool) ([]byte, error) {
	refDate := dte.ChileTime(time.Now()).AddDate(0, 0, -3).Format(time.DateOnly)
	for _, r := range demoRequests(refDate) {
		if int(r.TipoDTE) != tipo {
			continue
		}
		b, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		m["auto_send"] = autoSend
		return json.Marshal(m)
	}
	var tipos []string
	for _, r := range demoRequests(refDate) {
		tipos = append(tipos, strconv.Itoa(int(r.TipoDTE)))
	}
	return nil, fmt.Errorf("the demo has no request of that type (it has %s)", strings.Join(tipos, ", "))
}

type benchConfig struct {
	bases    []string
	key      string
	duration time.Duration
	workers  int
	body     []byte
	pids     []int
}

// bench runs the load and measures it.
func bench(ctx context.Context, c benchConfig) (*benchReport, error) {
	hc := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: c.workers, MaxConnsPerHost: c.workers}}
	defer hc.CloseIdleConnections()
	// One emission first, to fail fast on a wrong URL or key.
	if status, msg, err := benchEmit(ctx, hc, c.bases[0], c.key, c.body); err != nil {
		return nil, fmt.Errorf("%s: %w", c.bases[0], err)
	} else if status != http.StatusCreated {
		return nil, fmt.Errorf("%s: the first emission answered %d: %s", c.bases[0], status, msg)
	}
	cpu0, source, cpuErr := benchCPU(ctx, hc, c)
	start := time.Now()
	runCtx, cancel := context.WithDeadline(ctx, start.Add(c.duration))
	defer cancel()
	var (
		mu       sync.Mutex
		lat      []time.Duration
		errorsBy = map[string]int{}
		first    string
		wg       sync.WaitGroup
	)
	for w := range c.workers {
		base := c.bases[w%len(c.bases)]
		wg.Go(func() {
			var mine []time.Duration
			for runCtx.Err() == nil {
				t0 := time.Now()
				status, msg, err := benchEmit(runCtx, hc, base, c.key, c.body)
				d := time.Since(t0)
				if err != nil && runCtx.Err() != nil {
					break // the run's end cut the call short: not counted
				}
				if err == nil && status == http.StatusCreated {
					mine = append(mine, d)
					continue
				}
				what := "no answer"
				if err == nil {
					what = strconv.Itoa(status)
				} else {
					msg = err.Error()
				}
				mu.Lock()
				errorsBy[what]++
				if first == "" {
					first = base + ": " + what + ": " + msg
				}
				mu.Unlock()
				if err != nil {
					// A server down: do not spin.
					time.Sleep(100 * time.Millisecond)
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	rep := &benchReport{Servers: len(c.bases), Workers: c.workers, Seconds: round3(elapsed.Seconds()), Documents: len(lat),
		ErrorsBy: errorsBy, FirstError: first, CPUSource: source}
	for _, n := range errorsBy {
		rep.Errors += n
	}
	if len(errorsBy) == 0 {
		rep.ErrorsBy = nil
	}
	rep.PerSecond = round3(float64(len(lat)) / elapsed.Seconds())
	if len(lat) > 0 {
		slices.Sort(lat)
		rep.P50ms = ms(percentile(lat, 0.50))
		rep.P99ms = ms(percentile(lat, 0.99))
		rep.MaxMs = ms(lat[len(lat)-1])
	}
	if cpuErr == nil {
		cpu1, _, err := benchCPU(ctx, hc, c)
		if err == nil {
			used := round3(cpu1 - cpu0)
			rep.CPUSeconds = &used
			if len(lat) > 0 {
				per := round3(1000 * used / float64(len(lat)))
				rep.CPUPerDocMs = &per
			}
		} else {
			cpuErr = err
		}
	}
	if cpuErr != nil {
		rep.CPUSource = "unavailable: " + errLine(cpuErr)
	}
	return rep, nil
}

// benchEmit posts one emission; msg is the start of an answer other than
// 201.
func benchEmit(ctx context.Context, hc *http.Client, base, key string, body []byte) (status int, msg string, err error) {
	req, err := http.NewRequestWithContext(ctx, "POST", base+"/api/v1/billing/dte", bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	if strings.HasPrefix(key, "Bearer ") {
		req.Header.Set("Authorization", key)
	} else {
		req.Header.Set("X-Api-Key", key)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", uuid.NewString())
	res, err := hc.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusCreated {
		_, err = io.Copy(io.Discard, res.Body)
		return res.StatusCode, "", err
	}
	b, _ := io.ReadAll(io.LimitReader(res.Body, 300))
	return res.StatusCode, oneLine(string(b)), nil
}

// benchCPU returns the CPU seconds the servers' processes have used so
// far, summed, and where it read them.
func benchCPU(ctx context.Context, hc *http.Client, c benchConfig) (float64, string, error) {
	var total float64
	if len(c.pids) > 0 {
		for _, pid := range c.pids {
			s, err := procCPU(pid)
			if err != nil {
				return 0, "", err
			}
			total += s
		}
		return total, "/proc/PID/stat", nil
	}
	for _, base := range c.bases {
		s, err := metricsCPU(ctx, hc, base)
		if err != nil {
			return 0, "", err
		}
		total += s
	}
	return total, "/metrics process_cpu_seconds_total", nil
}

// userHZ is the unit of /proc/PID/stat's times: Linux reports them in
// USER_HZ, 100 a second on every architecture Go supports.
const userHZ = 100

// procCPU reads a process's user and system time, in seconds, from
// /proc/PID/stat (its fields 14 and 15, counted after the parenthesized
// command name, which may hold spaces).
func procCPU(pid int) (float64, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, fmt.Errorf("the CPU of process %d: %w", pid, err)
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("the CPU of process %d: /proc/%d/stat is not readable", pid, pid)
	}
	// After ") ": state is field 3, utime 14, stime 15.
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("the CPU of process %d: /proc/%d/stat is too short", pid, pid)
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("the CPU of process %d: /proc/%d/stat has no times", pid, pid)
	}
	return float64(utime+stime) / userHZ, nil
}

// metricsCPU reads process_cpu_seconds_total from a server's /metrics.
func metricsCPU(ctx context.Context, hc *http.Client, base string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	res, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s/metrics answered %d", base, res.StatusCode)
	}
	sc := bufio.NewScanner(io.LimitReader(res.Body, 16<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "process_cpu_seconds_total "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || math.IsNaN(f) {
				return 0, fmt.Errorf("%s/metrics: process_cpu_seconds_total %q", base, v)
			}
			return f, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New(base + "/metrics has no process_cpu_seconds_total")
}

// percentile returns the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return round3(float64(d) / float64(time.Millisecond)) }

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// printBench writes the report for a person.
func printBench(w io.Writer, r *benchReport) {
	fmt.Fprintf(w, "dtekit bench: tipo %d, %d workers over %d server(s), %.1f s\n", r.TipoDTE, r.Workers, r.Servers, r.Seconds)
	fmt.Fprintf(w, "  documents  %d (%.1f/s)\n", r.Documents, r.PerSecond)
	fmt.Fprintf(w, "  latency    p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", r.P50ms, r.P99ms, r.MaxMs)
	fmt.Fprintf(w, "  errors     %d", r.Errors)
	if r.Errors > 0 {
		keys := make([]string, 0, len(r.ErrorsBy))
		for k := range r.ErrorsBy {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s: %d", k, r.ErrorsBy[k]))
		}
		fmt.Fprintf(w, " (%s; first: %s)", strings.Join(parts, ", "), r.FirstError)
	}
	fmt.Fprintln(w)
	switch {
	case r.CPUPerDocMs != nil:
		fmt.Fprintf(w, "  server CPU %.2f s, %.2f ms per document (%s)\n", *r.CPUSeconds, *r.CPUPerDocMs, r.CPUSource)
	case r.CPUSeconds != nil:
		fmt.Fprintf(w, "  server CPU %.2f s (%s)\n", *r.CPUSeconds, r.CPUSource)
	default:
		fmt.Fprintf(w, "  server CPU %s\n", r.CPUSource)
	}
}
