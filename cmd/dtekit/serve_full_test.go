//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/dtekit/dtekit/internal/oracle"
)

// mountSmallTmpfs mounts a tmpfs of size bytes at dir for the test's
// life. Mounting needs root; without it the test skips (fails when
// oracles are required, as CI runs it).
func mountSmallTmpfs(t *testing.T, dir string, size string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if oracle.Required() {
			t.Fatal("mounting a size-limited tmpfs (a disk that fills up) needs root")
		}
		t.Skip("mounting a size-limited tmpfs needs root")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
}

// fillDisk writes zeros to path until the file system has no space left
// and returns how many bytes it wrote.
func fillDisk(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	var n int64
	for {
		w, err := f.Write(buf)
		n += int64(w)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil {
			t.Fatalf("filling the disk: %v", err)
		}
	}
	// Smaller writes take the last partial block too.
	for _, size := range []int{4096, 512, 1} {
		for {
			w, err := f.Write(buf[:size])
			n += int64(w)
			if err != nil {
				break
			}
		}
	}
	return n
}

// readyz returns /readyz's status and body.
func readyz(t *testing.T, hc *http.Client, base string) (int, []byte) {
	t.Helper()
	res, err := hc.Get(base + "/readyz")
	if err != nil {
		t.Fatalf("readyz: %v", err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// TestServeDiskFull runs the server on a data directory of a small tmpfs
// and fills that file system: emissions then answer 503 with the error
// envelope and Retry-After (never 500), /readyz fails and names the
// storage check; once space is freed, /readyz recovers without a restart
// and emissions succeed; every document acknowledged with 201 is there.
func TestServeDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary; skipped with -short")
	}
	t.Parallel()
	bin := buildDtekit(t)
	data := filepath.Join(t.TempDir(), "data")
	mountSmallTmpfs(t, data, "24m")
	p := startServe(t, bin, data)
	demo := readDemoFile(t, data)
	hc := &http.Client{Timeout: 30 * time.Second}
	api := p.base + "/api/v1/billing"

	var acked []string
	emit := func() (int, http.Header, []byte) {
		req, _ := http.NewRequest("POST", api+"/dte", strings.NewReader(demoFactura))
		req.Header.Set("X-Api-Key", demo.APIKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", uuid.NewString())
		res, err := hc.Do(req)
		if err != nil {
			t.Fatalf("emit: %v", err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode == 201 {
			var em struct{ ID string }
			json.Unmarshal(b, &em)
			acked = append(acked, em.ID)
		}
		return res.StatusCode, res.Header, b
	}
	if s, _, b := emit(); s != 201 {
		t.Fatalf("emit before the disk fills: %d %s", s, b)
	}
	if s, b := readyz(t, hc, p.base); s != 200 {
		t.Fatalf("readyz before the disk fills: %d %s", s, b)
	}

	ballast := filepath.Join(data, "ballast")
	filled := fillDisk(t, ballast)
	t.Logf("ballast of %d bytes fills the data directory's file system", filled)

	// The WAL may still hold room for a few commits; after that, every
	// emission is refused with 503 and the envelope. Nothing answers 500.
	var got503 bool
	for i := 0; i < 200 && !got503; i++ {
		s, h, b := emit()
		switch s {
		case 201:
		case 503:
			got503 = true
			var env struct {
				Code, Message, Severity string
			}
			if err := json.Unmarshal(b, &env); err != nil || env.Code != "SERVICE_UNAVAILABLE" || env.Message == "" {
				t.Fatalf("503 without the envelope: %s", b)
			}
			if !strings.Contains(env.Message, "storage is full") {
				t.Errorf("503 message does not say storage is full: %q", env.Message)
			}
			if h.Get("Retry-After") == "" {
				t.Error("503 without Retry-After")
			}
		default:
			t.Fatalf("emission %d with the disk full: %d %s", i, s, b)
		}
	}
	if !got503 {
		t.Fatal("200 emissions on a full disk and none was refused")
	}
	s, b := readyz(t, hc, p.base)
	if s != 503 || !bytes.Contains(b, []byte(`"storage"`)) {
		t.Fatalf("readyz with the disk full: %d %s", s, b)
	}
	// Still refused while full (the probe does not pass by accident).
	time.Sleep(1100 * time.Millisecond)
	if s, b := readyz(t, hc, p.base); s != 503 {
		t.Fatalf("readyz a second later, disk still full: %d %s", s, b)
	}

	// Space comes back: readiness and emissions recover without a restart.
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, b := readyz(t, hc, p.base)
		if s == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz 10 s after space was freed: %d %s", s, b)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if s, _, b := emit(); s != 201 {
		t.Fatalf("emit after space was freed: %d %s", s, b)
	}

	// Every acknowledged document is readable.
	for _, id := range acked {
		if s, b := call(t, hc, "GET", api+"/dte/"+id, demo.APIKey, nil); s != 200 {
			t.Fatalf("acknowledged document %s: %d %s", id, s, b)
		}
	}
	p.stop(t)
	t.Logf("%d documents acknowledged, all readable", len(acked))
}
