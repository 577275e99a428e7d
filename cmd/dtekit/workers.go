package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dtekit/dtekit/billing"
)

// workersEnv names the variable that overrides the budgets of the job
// queues: how many jobs of each this process runs at once.
const workersEnv = "DTEKIT_JOBS_WORKERS"

// parseWorkers reads a list such as "delivery=20,submission=4": queue
// names (submission, recovery, delivery, maintenance, mail, mailbox, cesion) and budgets, 0 for
// none (a process that leaves that work to others on the same database).
// Queues not named keep their defaults; an empty list changes nothing.
func parseWorkers(s string) (billing.Workers, error) {
	var w billing.Workers
	fields := map[string]*int{"submission": &w.Submission, "recovery": &w.Recovery, "delivery": &w.Delivery, "maintenance": &w.Maintenance, "mail": &w.Mail, "mailbox": &w.Mailbox, "cesion": &w.Cesion}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, val, ok := strings.Cut(item, "=")
		n, err := strconv.Atoi(strings.TrimSpace(val))
		field := fields[strings.TrimSpace(name)]
		if !ok || field == nil || err != nil || n < 0 || n > 1000 {
			return billing.Workers{}, fmt.Errorf("%s: %q is not queue=workers with a queue among submission, recovery, delivery, maintenance, mail, mailbox, cesion and 0 to 1000 workers", workersEnv, item)
		}
		*field = n
		if n == 0 {
			*field = -1 // none, in billing.Workers
		}
	}
	return w, nil
}
