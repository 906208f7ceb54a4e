// Package benchratio measures several ways of doing one thing against a
// baseline in the same benchmark run: every round runs each variant once, in
// an order shuffled per round ([Order]), so all of them see the same machine
// load and none always follows the same other one; the median of
// each is reported as a ratio to the baseline's ("<name>-x") with the
// baseline's median in microseconds ("bare-µs"). A ratio moves much less with
// load than an absolute time, and no test ever asserts a time.
//
// It is benchmark support (imported by _test.go files only); it imports only
// the standard library.
package benchratio

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// Variant is one measured way; the first variant given to [Run] is the baseline.
type Variant struct {
	// Name labels the variant; its metric is "<Name>-x".
	Name string
	// Run does the thing once.
	Run func() error
}

// Run runs one round per b.Loop iteration and reports the metrics (with -v,
// a table too), and returns each variant's median in nanoseconds by name (for
// ratios between other variants). The ns/op of such a benchmark is the cost
// of a round.
func Run(b *testing.B, variants []Variant) map[string]float64 {
	b.Helper()
	samples := make([][]time.Duration, len(variants))
	order := Order(len(variants))
	for b.Loop() {
		for _, i := range order() {
			start := time.Now()
			if err := variants[i].Run(); err != nil {
				b.Fatalf("%s: %v", variants[i].Name, err)
			}
			samples[i] = append(samples[i], time.Since(start))
		}
	}
	medians := make(map[string]float64, len(variants))
	for i, v := range variants {
		medians[v.Name] = median(samples[i])
	}
	bare := median(samples[0])
	b.ReportMetric(bare/1e3, "bare-µs")
	for i, v := range variants[1:] {
		b.ReportMetric(median(samples[i+1])/bare, v.Name+"-x")
	}
	if testing.Verbose() {
		for i, v := range variants {
			fmt.Printf("%-22s median %9.0f µs  ratio %.2fx  (%d samples)\n", v.Name, median(samples[i])/1e3, median(samples[i])/bare, len(samples[i]))
		}
	}
	return medians
}

func median(d []time.Duration) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2])
}

// Order returns the order of each round of n variants: a permutation of
// 0..n-1, shuffled anew per call from a fixed seed, so a variant follows a
// different one from round to round (a fixed order would give each variant
// the same predecessor, whose leftovers in caches and scheduler state it
// would always pay or always be spared), and two runs shuffle alike.
func Order(n int) func() []int {
	rng := rand.New(rand.NewPCG(1, 2))
	perm := make([]int, n)
	for i := range perm {
		perm[i] = i
	}
	return func() []int {
		rng.Shuffle(n, func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		return perm
	}
}
