//go:build !race

package isolate_test

// raceDetector: this test binary is built without -race.
const raceDetector = false
