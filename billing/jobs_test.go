package billing

import (
	"context"
	"github.com/dtekit/dtekit/store/backendtest"
	"testing"

	"github.com/dtekit/dtekit/store"
)

// recordingJobs records the workers and periodic jobs registered on it.
type recordingJobs struct {
	store.Jobs
	workers  []store.Worker
	periodic map[string]bool // kinds enqueued on a timer
}

func (j *recordingJobs) Register(w store.Worker) error {
	j.workers = append(j.workers, w)
	return j.Jobs.Register(w)
}

func (j *recordingJobs) AddPeriodic(p store.PeriodicJob) error {
	j.periodic[p.Args().Kind()] = true
	return j.Jobs.AddPeriodic(p)
}

// recordingStore hands out recordingJobs as its runner.
type recordingStore struct {
	store.Store
	jobs *recordingJobs
}

func (s *recordingStore) Jobs() store.Jobs { return s.jobs }

// TestJobsAreRescuedSoonAfterACrash: River rescues a job that a killed
// process left running once both the store's rescue delay and the job's
// own Timeout have passed, and never when the Timeout is negative. So
// every kind the service registers, with submission on at its production
// defaults, has a Timeout that is not negative, and every kind that
// carries a document or a delivery forward has one no longer than
// store.DefaultRescueAfter (0 is the runner's default of a minute): two
// minutes after a crash, at most, its work goes on. Only the periodic
// sweeps may take longer; a run a crash cut short is done again by their
// next tick.
func TestJobsAreRescuedSoonAfterACrash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := openStore(ctx, "sqlite", backendtest.SQLitePath(t))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rec := &recordingStore{Store: st, jobs: &recordingJobs{Jobs: st.Jobs(), periodic: map[string]bool{}}}
	kek, _ := ParseKEK(testKEK)
	kr, err := NewKeyring(kek)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Store: rec, Keyring: kr, Submission: &SubmitConfig{}}); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, w := range rec.jobs.workers {
		kinds[w.Kind] = true
		switch {
		case w.Timeout < 0:
			t.Errorf("%s: Timeout %v: never rescued after a crash", w.Kind, w.Timeout)
		case !rec.jobs.periodic[w.Kind] && w.Timeout > store.DefaultRescueAfter:
			t.Errorf("%s: Timeout %v: rescued only that long after a crash, want at most %v", w.Kind, w.Timeout, store.DefaultRescueAfter)
		}
	}
	for _, k := range []string{"dte.recover", "dte.sii", "webhook.deliver"} {
		if !kinds[k] {
			t.Errorf("no worker registered for %s (registered: %v)", k, kinds)
		}
	}
}
