package replay_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dshsim/dshsim/harness/replay"
)

// BenchmarkReplayTranscripts replays the nineteen upstream recordings per
// iteration with -parallel 1 and 2 and reports recordings/s.
func BenchmarkReplayTranscripts(b *testing.B) {
	ds, err := replay.Discover([]string{root + "/transcripts"})
	if err != nil {
		b.Fatal(err)
	}
	for _, par := range []int{1, 2} {
		b.Run(fmt.Sprintf("parallel=%d", par), func(b *testing.B) {
			start := time.Now()
			for b.Loop() {
				for _, r := range replay.Run(context.Background(), ds, replay.RunOptions{Parallel: par}) {
					if r.Verdict != replay.Match {
						b.Fatalf("%s", r.Summary())
					}
				}
			}
			b.ReportMetric(float64(len(ds)*b.N)/time.Since(start).Seconds(), "recordings/s")
		})
	}
}

// BenchmarkReplaySpeedup measures -parallel 1 (the baseline) and -parallel 2
// in the same iteration and reports the ratio.
func BenchmarkReplaySpeedup(b *testing.B) {
	ds, err := replay.Discover([]string{root + "/transcripts"})
	if err != nil {
		b.Fatal(err)
	}
	var one, two time.Duration
	for b.Loop() {
		for _, par := range []int{1, 2} {
			t0 := time.Now()
			for _, r := range replay.Run(context.Background(), ds, replay.RunOptions{Parallel: par}) {
				if r.Verdict != replay.Match {
					b.Fatalf("%s", r.Summary())
				}
			}
			if par == 1 {
				one += time.Since(t0)
			} else {
				two += time.Since(t0)
			}
		}
	}
	b.ReportMetric(one.Seconds()/two.Seconds(), "speedup(p2/p1)")
	b.ReportMetric(float64(len(ds)*b.N)/one.Seconds(), "recordings/s(p1)")
	b.ReportMetric(float64(len(ds)*b.N)/two.Seconds(), "recordings/s(p2)")
}
