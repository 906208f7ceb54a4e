package cmdline_test

import (
	"testing"

	"github.com/dshsim/dshsim/harness/cmdline"
)

// TestByteSize: a byte count with an optional K, M or G (powers of 1024);
// anything else, or an overflow, is refused.
func TestByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"1048576", 1 << 20, true}, {"4K", 4 << 10, true}, {"512M", 512 << 20, true}, {"2G", 2 << 30, true},
		{"8589934591G", 8589934591 << 30, true}, {"8589934592G", 0, false},
		{"", 0, false}, {"K", 0, false}, {"-1", 0, false}, {"+1", 0, false}, {"1T", 0, false}, {"1k", 0, false}, {"1.5G", 0, false}, {"1 G", 0, false},
	} {
		var b cmdline.ByteSize
		err := b.Set(tc.in)
		if (err == nil) != tc.ok || (tc.ok && int64(b) != tc.want) {
			t.Errorf("Set(%q) = %d, %v; want %d, ok %v", tc.in, b, err, tc.want, tc.ok)
		}
	}
	for n, want := range map[int64]string{0: "0", 1000: "1000", 1536: "1536", 4 << 10: "4K", 512 << 20: "512M", 1 << 30: "1G", 3 << 30: "3G"} {
		if got := (*cmdline.ByteSize)(&n).String(); got != want {
			t.Errorf("String(%d) = %q, want %q", n, got, want)
		}
	}
}
