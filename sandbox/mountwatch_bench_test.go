//go:build linux

package sandbox

import "testing"

// BenchmarkMountTable is the mount table as Validate gets it: "fresh" reads
// and parses /proc/self/mountinfo on every call (as before the watch, and as
// the watch does after a namespace change), "watched" is the watch on an
// unchanged table (its checks, then the kept table).
func BenchmarkMountTable(b *testing.B) {
	for _, v := range []struct {
		name string
		w    *mountWatch
	}{{"fresh", &mountWatch{fd: -1, off: true}}, {"watched", &mountWatch{fd: -1}}} {
		b.Run(v.name, func(b *testing.B) {
			defer v.w.close()
			for b.Loop() {
				if _, err := v.w.table(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
