package recording_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// seed writes files (name → size in bytes) under a fresh directory.
func seed(t *testing.T, files map[string]int) string {
	t.Helper()
	dir := t.TempDir()
	for name, size := range files {
		harness.MustWrite(t, filepath.Join(dir, name), strings.Repeat("x", size))
	}
	return dir
}

// TestCopySeedBounds: each bound admits a seed that reaches it exactly and
// refuses one past it by one, naming the file that passed it and the flag
// that raises it; what was admitted is a byte-for-byte copy.
func TestCopySeedBounds(t *testing.T) {
	// a.txt (4 bytes), b/c.txt (6 bytes): 10 bytes in 3 entries (b counts).
	files := map[string]int{"a.txt": 4, "b/c.txt": 6}
	for _, tc := range []struct {
		name   string
		bounds recording.SeedBounds
		past   string // "" when the seed fits
		flag   string
	}{
		{"total at the bound", recording.SeedBounds{MaxBytes: 10}, "", ""},
		{"total past the bound", recording.SeedBounds{MaxBytes: 9}, "c.txt", "-seed-max-bytes"},
		{"count at the bound", recording.SeedBounds{MaxFiles: 3}, "", ""},
		{"count past the bound", recording.SeedBounds{MaxFiles: 2}, "c.txt", "-seed-max-files"},
		{"one file at the bound", recording.SeedBounds{MaxFileBytes: 6}, "", ""},
		{"one file past the bound", recording.SeedBounds{MaxFileBytes: 5}, "c.txt", "-seed-max-file-bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, dst := seed(t, files), t.TempDir()
			err := recording.CopySeed(src, dst, tc.bounds)
			if tc.past == "" {
				if err != nil {
					t.Fatal(err)
				}
				for name, size := range files {
					if data, err := os.ReadFile(filepath.Join(dst, name)); err != nil || len(data) != size {
						t.Errorf("%s: %d bytes copied (%v), want %d", name, len(data), err, size)
					}
				}
				return
			}
			var be *recording.BoundError
			if !errors.As(err, &be) {
				t.Fatalf("err = %v, want a bound error", err)
			}
			if filepath.Base(be.Path) != tc.past || !strings.Contains(err.Error(), tc.flag) {
				t.Errorf("err = %q, want it to name %s and %s", err, tc.past, tc.flag)
			}
		})
	}
}

// TestCopySeedRefusesAHugeSparseFileUnread: a 1 GiB sparse file is refused
// by its size before a byte of it is read (it was read whole into memory),
// and nothing of it reaches the copy.
func TestCopySeedRefusesAHugeSparseFileUnread(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	big := filepath.Join(src, "big.bin")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	err = recording.CopySeed(src, dst, recording.SeedBounds{})
	var be *recording.BoundError
	if !errors.As(err, &be) || be.Path != big || !strings.Contains(err.Error(), "1073741824 bytes") {
		t.Fatalf("err = %v, want the bound of one file naming %s", err, big)
	}
	if fi, err := os.Stat(filepath.Join(dst, "big.bin")); err == nil {
		t.Errorf("the copy holds big.bin (%d bytes)", fi.Size())
	}
}

// TestCopySeedRefusesNonRegularFiles: a symlink out of the seed is an error
// naming it, not followed, and so is a FIFO; a symlink inside the seed is
// copied as a symlink and counts as an entry.
func TestCopySeedRefusesNonRegularFiles(t *testing.T) {
	src := t.TempDir()
	if err := os.Symlink("/etc/passwd", filepath.Join(src, "link")); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	err := recording.CopySeed(src, dst, recording.SeedBounds{})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(src, "link")+`: symlink to the absolute path "/etc/passwd"`) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "link")); err == nil {
		t.Error("the link out of the seed was copied")
	}

	fifo := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifo, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := recording.CopySeed(fifo, t.TempDir(), recording.SeedBounds{}); err == nil || !strings.Contains(err.Error(), filepath.Join(fifo, "pipe")+": not a regular file, directory or symlink") {
		t.Fatalf("a FIFO: %v", err)
	}

	inside := seed(t, map[string]int{"AGENTS.canonical.md": 3})
	if err := os.Symlink("AGENTS.canonical.md", filepath.Join(inside, "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	dst = t.TempDir()
	if err := recording.CopySeed(inside, dst, recording.SeedBounds{MaxFiles: 2}); err != nil {
		t.Fatal(err)
	}
	if link, err := os.Readlink(filepath.Join(dst, "AGENTS.md")); err != nil || link != "AGENTS.canonical.md" {
		t.Fatalf("AGENTS.md: %q %v", link, err)
	}
	var be *recording.BoundError
	if err := recording.CopySeed(inside, t.TempDir(), recording.SeedBounds{MaxFiles: 1}); !errors.As(err, &be) {
		t.Fatalf("a link past the count: %v", err)
	}
}

// TestSeedBoundsCheck: a negative bound is refused naming its flag; zero
// means the default.
func TestSeedBoundsCheck(t *testing.T) {
	for _, tc := range []struct {
		b    recording.SeedBounds
		flag string
	}{
		{recording.SeedBounds{MaxBytes: -1}, "-seed-max-bytes"},
		{recording.SeedBounds{MaxFiles: -1}, "-seed-max-files"},
		{recording.SeedBounds{MaxFileBytes: -1}, "-seed-max-file-bytes"},
	} {
		if err := tc.b.Check(); err == nil || !strings.HasPrefix(err.Error(), tc.flag+" -1:") {
			t.Errorf("%+v: %v, want an error naming %s", tc.b, err, tc.flag)
		}
	}
	if err := (recording.SeedBounds{}).Check(); err != nil {
		t.Error(err)
	}
	want := recording.SeedBounds{MaxBytes: recording.DefaultSeedMaxBytes, MaxFiles: recording.DefaultSeedMaxFiles, MaxFileBytes: recording.DefaultSeedMaxFileBytes}
	if got := (recording.SeedBounds{}).WithDefaults(); got != want {
		t.Errorf("defaults %+v, want %+v", got, want)
	}
}
