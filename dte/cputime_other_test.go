//go:build !unix

package dte_test

import (
	"testing"
	"time"
)

// cpuTime is not measured on this system (see envio_bench_test.go).
func cpuTime(*testing.B) time.Duration { return 0 }
