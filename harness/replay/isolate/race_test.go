//go:build race

package isolate_test

// raceDetector: this test binary is built with -race, whose shadow memory
// counts against a memory bound (RLIMIT_DATA) as the process's own data.
const raceDetector = true
