package spill

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkSpill1GiB streams a 1 GiB output through the spill writer and, in
// the same run, copies the same file with io.Copy (copy_file_range) and with a
// plain read/write loop. It reports MB/s for each and the peak RSS growth of
// spilling 1 GiB in a fresh child process (target < 64 MiB).
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

	b.Run("spill", func(b *testing.B) {
		b.ReportMetric(float64(growth)/(1<<20), "rss-growth-MiB")
		b.SetBytes(size)
		for i := 0; i < b.N; i++ {
			p, _ := newPolicy(b, TokenConfig(DefaultMaxInlineTokens), filepath.Join(dir, "spill"))
			in, _ := os.Open(src)
			w := p.NewWriter(newCallTB(b, "bash", "s"))
			if _, err := io.CopyBuffer(w, in, make([]byte, 64<<10)); err != nil {
				b.Fatal(err)
			}
			in.Close()
			r, err := w.Close()
			if err != nil || !r.Spilled {
				b.Fatal(err)
			}
			os.Remove(r.Saved.Locator)
		}
	})
	b.Run("copy_file_range", func(b *testing.B) {
		b.SetBytes(size)
		for i := 0; i < b.N; i++ {
			in, _ := os.Open(src)
			out, _ := os.Create(filepath.Join(dir, "copy"))
			if _, err := io.Copy(out, in); err != nil {
				b.Fatal(err)
			}
			in.Close()
			out.Close()
			os.Remove(filepath.Join(dir, "copy"))
		}
	})
	b.Run("read_write_copy", func(b *testing.B) {
		b.SetBytes(size)
		for i := 0; i < b.N; i++ {
			in, _ := os.Open(src)
			out, _ := os.Create(filepath.Join(dir, "copy"))
			if _, err := io.CopyBuffer(struct{ io.Writer }{out}, struct{ io.Reader }{in}, make([]byte, 64<<10)); err != nil {
				b.Fatal(err)
			}
			in.Close()
			out.Close()
			os.Remove(filepath.Join(dir, "copy"))
		}
	})
}
