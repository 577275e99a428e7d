package ted

import (
	"fmt"
	"sync"
	"time"
	_ "time/tzdata" // America/Santiago must load on machines without a zone database
)

// chileLocation loads America/Santiago once; the result never changes.
var chileLocation = sync.OnceValues(func() (*time.Location, error) {
	return time.LoadLocation("America/Santiago")
})

// chile returns the America/Santiago location.
func chile() (*time.Location, error) {
	loc, err := chileLocation()
	if err != nil {
		return nil, fmt.Errorf("ted: loading time zone America/Santiago: %w", err)
	}
	return loc, nil
}
