package procfs

import "testing"

// BenchmarkAll reads every process's stat line of this machine's /proc, as
// the executor's sweep does after every call.
func BenchmarkAll(b *testing.B) {
	for b.Loop() {
		if _, err := Proc.All(); err != nil {
			b.Fatal(err)
		}
	}
}
