package clocktest_test

import (
	"fmt"
	"time"

	"github.com/dtekit/dtekit/internal/clocktest"
)

func Example() {
	clk := clocktest.New(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	now := clk.Now // what the code under test receives
	clk.Advance(90 * time.Minute)
	fmt.Println(now().Format(time.DateTime))
	clk.Set(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC))
	fmt.Println(now().Format(time.DateTime))
	// Output:
	// 2026-11-23 13:30:00
	// 2027-01-01 00:00:00
}
