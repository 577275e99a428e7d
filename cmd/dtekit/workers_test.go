package main

import (
	"strings"
	"testing"

	"github.com/dtekit/dtekit/billing"
)

// TestParseWorkers: DTEKIT_JOBS_WORKERS names queues and budgets, 0 for
// none (billing's negative), the rest default (billing's zero); anything
// else is refused naming the variable and the item.
func TestParseWorkers(t *testing.T) {
	for in, want := range map[string]billing.Workers{
		"":                                 {},
		"delivery=20":                      {Delivery: 20},
		" submission = 4 , maintenance=1 ": {Submission: 4, Maintenance: 1},
		"recovery=0,delivery=3,":           {Recovery: -1, Delivery: 3},
	} {
		got, err := parseWorkers(in)
		if err != nil || got != want {
			t.Errorf("parseWorkers(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"delivery", "delivery=x", "delivery=-1", "deliveries=2", "delivery=1001", "=3"} {
		if _, err := parseWorkers(bad); err == nil || !strings.Contains(err.Error(), workersEnv) || !strings.Contains(err.Error(), strings.TrimSpace(bad)) {
			t.Errorf("parseWorkers(%q): %v, want an error naming %s and the item", bad, err, workersEnv)
		}
	}
}
