package main

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// psCPU is the CPU time of a process as ps reports it (whole seconds,
// rounded down): an oracle beside bench's own reading of /proc.
func psCPU(t *testing.T, pid int) int {
	t.Helper()
	out, err := exec.Command("ps", "-o", "times=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		t.Skipf("ps: %v", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("ps -o times: %q", out)
	}
	return n
}

// totalCount is the total_count of a list page at target.
func totalCount(t *testing.T, target, key string) int {
	t.Helper()
	status, body := call(t, &http.Client{Timeout: 30 * time.Second}, "GET", target, key, nil)
	var page struct {
		TotalCount *int `json:"total_count"`
	}
	if status != 200 || json.Unmarshal(body, &page) != nil || page.TotalCount == nil {
		t.Fatalf("GET %s: %d %s", target, status, body)
	}
	return *page.TotalCount
}

// totalDTEs is the server's count of the demo company's documents of a
// type.
func totalDTEs(t *testing.T, base, key string, tipo int) int {
	t.Helper()
	return totalCount(t, base+"/api/v1/billing/dte?limit=1&tipo_dte="+strconv.Itoa(tipo), key)
}

// TestBenchDemo runs "dtekit bench" briefly against "dtekit serve --demo":
// once reading the server's CPU from /proc (--pid), once from its /metrics
// with another type. Each report's documents are what the server stored
// (the count of its list, less the bench's first emission, which checks
// the key, and at most the calls the run's end cut short), no error, its
// percentiles in order, and the server's CPU within what ps reports for
// the process over the run (ps counts whole seconds).
func TestBenchDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	t.Parallel()
	bin := buildDtekit(t)
	data := filepath.Join(t.TempDir(), "data")
	p := startServe(t, bin, data)
	defer p.stop(t)
	demo := readDemoFile(t, data)
	pid := p.cmd.Process.Pid
	for _, c := range []struct {
		tipo  int
		flags []string
		src   string
	}{
		{33, []string{"--pid", strconv.Itoa(pid)}, "/proc/PID/stat"},
		{39, []string{"--tipo", "39"}, "/metrics process_cpu_seconds_total"},
	} {
		const workers = 2
		before, cpu0 := totalDTEs(t, p.base, demo.APIKey, c.tipo), psCPU(t, pid)
		code, out, errs := runCLI(t, "", nil, append([]string{"bench", "--url", p.base, "--key", demo.APIKey,
			"--duration", "1500ms", "--concurrency", strconv.Itoa(workers), "--json"}, c.flags...)...)
		cpu1 := psCPU(t, pid)
		if code != 0 {
			t.Fatalf("bench %v: exit %d: %s", c.flags, code, errs)
		}
		var r benchReport
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("bench --json: %v: %s", err, out)
		}
		stored := totalDTEs(t, p.base, demo.APIKey, c.tipo) - before - 1
		if r.TipoDTE != c.tipo || r.Documents < 3 || r.Documents > stored || stored > r.Documents+workers {
			t.Errorf("bench of tipo %d reports %d documents; the server stored %d besides the first", c.tipo, r.Documents, stored)
		}
		if r.Errors != 0 || r.Servers != 1 || r.Workers != workers || r.Seconds < 1.5 || r.Seconds > 5 {
			t.Errorf("bench: %s", out)
		}
		if !(r.P50ms > 0 && r.P50ms <= r.P99ms && r.P99ms <= r.MaxMs && r.MaxMs < 1000*r.Seconds) {
			t.Errorf("latencies out of order: p50 %v, p99 %v, max %v ms", r.P50ms, r.P99ms, r.MaxMs)
		}
		if diff := float64(r.Documents) / r.Seconds; r.PerSecond < 0.99*diff || r.PerSecond > 1.01*diff {
			t.Errorf("%v documents/s for %d documents in %v s", r.PerSecond, r.Documents, r.Seconds)
		}
		if r.CPUSource != c.src || r.CPUSeconds == nil || r.CPUPerDocMs == nil {
			t.Fatalf("bench read no CPU from %s: %s", c.src, out)
		}
		// ps floors both readings: the process used between
		// cpu1-cpu0-1 and cpu1-cpu0+1 seconds over a span that holds
		// the bench's own window.
		if cpu := *r.CPUSeconds; cpu <= 0 || cpu > float64(cpu1-cpu0)+1 || cpu < float64(cpu1-cpu0)-1.2 {
			t.Errorf("bench reports %.2f s of server CPU; ps read %d s then %d s", cpu, cpu0, cpu1)
		}
		if per := 1000 * *r.CPUSeconds / float64(r.Documents); *r.CPUPerDocMs < per-0.01 || *r.CPUPerDocMs > per+0.01 {
			t.Errorf("CPU per document %.3f ms, want %.3f", *r.CPUPerDocMs, per)
		}
		t.Logf("tipo %d: %d documents (%.0f/s), p50 %.1f ms, p99 %.1f ms, %.2f ms of server CPU each (%s; ps: %d s)",
			c.tipo, r.Documents, r.PerSecond, r.P50ms, r.P99ms, *r.CPUPerDocMs, r.CPUSource, cpu1-cpu0)
	}
}

// TestBenchFlags: bench refuses a wrong command line, naming the flag,
// and a server that does not answer or refuses the key fails at the
// first emission, in one line.
func TestBenchFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"bench", "--key", "k"}, exitUsage, "missing required flag --url"},
		{[]string{"bench", "--url", "ftp://x", "--key", "k"}, exitUsage, `--url: "ftp://x" is not an http:// or https:// base URL`},
		{[]string{"bench", "--url", "http://127.0.0.1:1", "--key", "k", "--tipo", "99"}, exitUsage, "--tipo 99: the demo has no request of that type"},
		{[]string{"bench", "--url", "http://127.0.0.1:1", "--key", "k", "--concurrency", "0"}, exitUsage, "--concurrency 0: want 1 to 256"},
		{[]string{"bench", "--url", "http://127.0.0.1:1", "--key", "k", "--duration", "2h"}, exitUsage, "--duration 2h0m0s: want more than 0 and at most 1h"},
		{[]string{"bench", "--url", "http://127.0.0.1:1", "--key", "k", "--pid", "x"}, exitUsage, `--pid: "x" is not a process id`},
		{[]string{"bench", "--url", "http://127.0.0.1:1", "--key", "k", "--duration", "1s"}, exitFail, "dtekit bench: http://127.0.0.1:1: "},
	} {
		code, _, errs := runCLI(t, "", nil, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want exit %d with %q", c.args, code, errs, c.code, c.want)
		}
		if c.code == exitFail && strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: %q is not one line", c.args, errs)
		}
	}
}
