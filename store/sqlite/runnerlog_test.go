package sqlite_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dtekit/dtekit/store"
	"github.com/dtekit/dtekit/store/sqlite"
)

// syncBuffer is a bytes.Buffer safe for the runner's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type countArgs struct{}

func (countArgs) Kind() string { return "sqlite_test.count" }

// TestRunnerRoutineLogsAtDebug: the job runner's routine messages (the
// client starting and stopping, the producers' job counts that River
// logs every 5 s while they change) reach the store's logger at debug
// level, so a server logging at info does not show them; a failing job
// still shows at info.
func TestRunnerRoutineLogsAtDebug(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for River's 5-second heartbeat")
	}
	t.Parallel()
	ctx := context.Background()
	var logs syncBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), sqlite.FileName),
		&sqlite.Options{Jobs: store.JobsConfig{Logger: logger, PollInterval: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ran := make(chan struct{}, 2)
	if err := st.Jobs().Register(store.Worker{Kind: countArgs{}.Kind(), Retry: []time.Duration{time.Hour},
		Work: func(context.Context, *store.Job) error { ran <- struct{}{}; return errWork }}); err != nil {
		t.Fatal(err)
	}
	if err := st.Jobs().Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Jobs().Enqueue(ctx, countArgs{}, nil); err != nil {
		t.Fatal(err)
	}
	<-ran
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(logs.String(), "Producer job counts") {
		if time.Now().After(deadline) {
			t.Fatalf("no job counts within 15 s:\n%s", logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := st.Jobs().Stop(stop); err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec struct{ Level, Msg string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		for _, m := range []string{"Producer job counts", "River client started", "River client stopped", "Job errored"} {
			if strings.Contains(rec.Msg, m) {
				seen[m] = rec.Level
			}
		}
	}
	for msg, level := range map[string]string{"Producer job counts": "DEBUG", "River client started": "DEBUG",
		"River client stopped": "DEBUG", "Job errored": "INFO"} {
		if seen[msg] != level {
			t.Errorf("%q logged at %q, want %s\n%s", msg, seen[msg], level, logs.String())
		}
	}
}

// errWork is the failure of the counted job.
var errWork = errorString("the job failed on purpose")

type errorString string

func (e errorString) Error() string { return string(e) }
