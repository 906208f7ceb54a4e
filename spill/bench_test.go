package spill

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkSpill1GiB streams a 1 GiB output (from a file) through the spill
// writer and, interleaved in the same iterations, copies the same file with
// io.Copy (copy_file_range) and with a plain read/write loop. It reports MB/s
// for each, the spill/read_write speed ratio, and the peak RSS growth of
// spilling 1 GiB in a fresh child process (must stay under 64 MiB).
func BenchmarkSpill1GiB(b *testing.B) {
	const size = 1 << 30
	dir := b.TempDir()
	src := filepath.Join(dir, "src.log")
	sf, err := os.Create(src)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.CopyBuffer(sf, &lineReader{left: size}, make([]byte, 1<<20)); err != nil {
		b.Fatal(err)
	}
	sf.Close()

	growth := measureRSS(b, size)
	b.Logf("spilling 1 GiB in a fresh process grew peak RSS (VmHWM - VmRSS before) by %.1f MiB", float64(growth)/(1<<20))
	if growth >= 64<<20 {
		b.Errorf("peak RSS grew by %d MiB (limit 64)", growth>>20)
	}

	// The three runs are interleaved in every iteration (in rotating order),
	// so they see the same machine load; the ratios are the numbers to read.
	spillRun := func() {
		p, _ := newPolicy(b, TokenConfig(DefaultMaxInlineTokens), filepath.Join(dir, "spill"))
		in, _ := os.Open(src)
		w := p.NewWriter(newCallTB(b, "bash", "s"))
		// the same 64 KiB chunks as the read/write copy (hide *os.File's WriterTo)
		if _, err := io.CopyBuffer(w, struct{ io.Reader }{in}, make([]byte, 64<<10)); err != nil {
			b.Fatal(err)
		}
		in.Close()
		r, err := w.Close()
		if err != nil || !r.Spilled {
			b.Fatal(err)
		}
		os.Remove(r.Saved.Locator)
	}
	copyRun := func(plain bool) {
		in, _ := os.Open(src)
		out, _ := os.Create(filepath.Join(dir, "copy"))
		var err error
		if plain { // hide ReaderFrom/WriterTo: a user-space read/write loop
			_, err = io.CopyBuffer(struct{ io.Writer }{out}, struct{ io.Reader }{in}, make([]byte, 64<<10))
		} else { // *os.File to *os.File: copy_file_range in the kernel
			_, err = io.Copy(out, in)
		}
		if err != nil {
			b.Fatal(err)
		}
		in.Close()
		out.Close()
		os.Remove(filepath.Join(dir, "copy"))
	}
	var tSpill, tCopy, tPlain time.Duration
	b.ResetTimer()
	runs := []struct {
		f   func()
		sum *time.Duration
	}{{spillRun, &tSpill}, {func() { copyRun(false) }, &tCopy}, {func() { copyRun(true) }, &tPlain}}
	for i := 0; i < b.N; i++ {
		for k := range runs { // rotate the order: page-cache writeback hits each run alike
			r := runs[(i+k)%len(runs)]
			t0 := time.Now()
			r.f()
			*r.sum += time.Since(t0)
		}
	}
	mbs := func(d time.Duration) float64 { return float64(size) * float64(b.N) / d.Seconds() / 1e6 }
	b.ReportMetric(mbs(tSpill), "spill-MB/s")
	b.ReportMetric(mbs(tCopy), "copy_file_range-MB/s")
	b.ReportMetric(mbs(tPlain), "read_write-MB/s")
	b.ReportMetric(tPlain.Seconds()/tSpill.Seconds(), "spill/read_write")
	b.ReportMetric(float64(growth)/(1<<20), "rss-growth-MiB")
}
