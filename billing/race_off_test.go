//go:build !race

package billing

// raceEnabled reports that the tests run under the race detector, which
// slows every goroutine several times and makes timing ratios noisier.
const raceEnabled = false
