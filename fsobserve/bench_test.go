package fsobserve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkWrite compares a guarded atomic write (lock, version compare,
// staging, fsync, rename) with a plain os.WriteFile and an os.WriteFile plus
// fsync of the same bytes, as baselines measured in the same run.
func BenchmarkWrite(b *testing.B) {
	for _, size := range []int{1 << 10, 1 << 20} {
		content := strings.Repeat("x", size-1) + "\n"
		name := map[int]string{1 << 10: "1KiB", 1 << 20: "1MiB"}[size]
		b.Run("atomic-guarded/"+name, func(b *testing.B) {
			dir := b.TempDir()
			l, _ := NewLocal(WithCwd(dir))
			tg, _ := l.Resolve("f", "")
			os.WriteFile(filepath.Join(dir, "f"), []byte("seed"), 0o644)
			b.SetBytes(int64(size))
			for b.Loop() {
				info, _, _ := l.Stat(tg)
				if _, err := l.WriteText(context.Background(), tg, content, WriteIntent{Kind: ReplaceIfVersion, Version: info.Version}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("plain-writefile/"+name, func(b *testing.B) {
			p := filepath.Join(b.TempDir(), "f")
			b.SetBytes(int64(size))
			for b.Loop() {
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("writefile-fsync/"+name, func(b *testing.B) {
			p := filepath.Join(b.TempDir(), "f")
			b.SetBytes(int64(size))
			for b.Loop() {
				f, err := os.Create(p)
				if err != nil {
					b.Fatal(err)
				}
				f.WriteString(content)
				f.Sync()
				f.Close()
			}
		})
	}
}

// BenchmarkScanLines measures the bounded-memory text scan a read runs.
func BenchmarkScanLines(b *testing.B) {
	text := strings.Repeat("a line of ordinary text, seventy-odd bytes long, ascii only........\n", 16384)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		n := 0
		if err := ScanLines(context.Background(), strings.NewReader(text), "/d", 2000, func(Line) { n++ }); err != nil {
			b.Fatal(err)
		}
	}
}
