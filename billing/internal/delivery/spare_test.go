package delivery

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// TestSpareWorkersForOtherCompanies: with 6 delivery workers and a company
// cap of 3, two companies whose two webhooks each hang (a tarpit that
// answers nothing until the attempt's bound) would hold all 6 workers, and
// a third company's delivery would wait for the first attempt to time out
// (3 s). A worker is kept spare for companies with no attempt running: the
// two hold 5 at most, and the third company's delivery arrives at once
// (measured below a second; the bound is 3 s), before any tarpit attempt
// ends.
func TestSpareWorkersForOtherCompanies(t *testing.T) {
	t.Parallel()
	const timeout = 3 * time.Second
	r := newCapsRig(t, timeout)
	var (
		mu      sync.Mutex
		hanging int
		fastAt  time.Time
	)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/rapido" {
			mu.Lock()
			fastAt = time.Now()
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
			return
		}
		mu.Lock()
		hanging++
		mu.Unlock()
		select { // a tarpit: nothing until the client gives up
		case <-req.Context().Done():
		case <-release:
		}
		mu.Lock()
		hanging--
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	a, b := r.empresa("76192083-9", srv.URL, "/a1", "/a2"), r.empresa("11111111-1", srv.URL, "/b1", "/b2")
	c := r.empresa("22222222-2", srv.URL, "/rapido")
	r.publish(a, 3) // 6 deliveries to tarpits
	r.publish(b, 3) // 6 more
	r.start()
	start := time.Now()
	waitFor(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return hanging >= 5
	})
	time.Sleep(100 * time.Millisecond) // room for a sixth, if one could start
	mu.Lock()
	held := hanging
	mu.Unlock()
	if held > 5 {
		t.Errorf("the two hanging companies hold %d of the 6 workers; want one spare", held)
	}
	r.publish(c, 1)
	sent := time.Now()
	waitFor(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return !fastAt.IsZero()
	})
	mu.Lock()
	took := fastAt.Sub(sent)
	mu.Unlock()
	t.Logf("the third company's delivery took %s beside two hanging companies (%s after they began)", took, fastAt.Sub(start))
	if took >= time.Second {
		t.Errorf("the third company's delivery took %s beside two hanging companies, want under 1 s (an attempt's bound is %s)", took, timeout)
	}
}
