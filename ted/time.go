package ted

import (
	"fmt"
	"time"

	"github.com/dtekit/dtekit/internal/chile"
)

// location returns the America/Santiago location, in which TSTED is
// written.
func location() (*time.Location, error) {
	loc, err := chile.Location()
	if err != nil {
		return nil, fmt.Errorf("ted: %w", err)
	}
	return loc, nil
}
