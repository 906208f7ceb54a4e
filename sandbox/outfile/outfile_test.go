package outfile

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// upstream is a path upstream's executor really wrote (recording
// bash-output-truncated of the oracle).
const upstream = "/tmp/dsh-subprocess-zej5ai/dsh-subprocess-16759-1-e2e972163863-stdout.log"

func TestPatternMatchesUpstreamsPath(t *testing.T) {
	if got := Pattern.FindString("x " + upstream + "]"); got != upstream {
		t.Fatalf("Pattern found %q in upstream's path, want all of it", got)
	}
	for _, bad := range []string{
		"/tmp/dsh-subprocess-2067353002/dsh-spawn-3062451859.stdout",                // our old shape
		"/tmp/dsh-subprocess-zej5a/dsh-subprocess-16759-1-e2e972163863-stdout.log",  // 5 letters
		"/tmp/dsh-subprocess-zej5ai/dsh-subprocess-16759-e2e972163863-stdout.log",   // no counter
		"/tmp/dsh-subprocess-zej5ai/dsh-subprocess-16759-1-e2e97216386-stdout.log",  // 11 hex
		"/tmp/dsh-subprocess-zej5ai/dsh-subprocess-16759-1-e2e972163863-stdin.log",  // label
		"/tmp/dsh-subprocess-zej5ai/dsh-subprocess-16759-1-e2e972163863-stdout.txt", // suffix
		"/var/tmp/dsh-subprocess-zej5ai/dsh-subprocess-1-1-e2e972163863-stdout.lo",  // truncated
	} {
		if m := Pattern.FindString(bad); m != "" {
			t.Errorf("Pattern matches %q (%q)", bad, m)
		}
	}
}

func TestPrivateDirAndCreateMakeUpstreamsShape(t *testing.T) {
	d, err := PrivateDir()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if ok, _ := regexp.MatchString(`^dsh-subprocess-[A-Za-z0-9]{6}$`, filepath.Base(d)); !ok || filepath.Dir(d) != filepath.Clean(os.TempDir()) {
		t.Fatalf("PrivateDir = %q, want <tmpdir>/dsh-subprocess-XXXXXX", d)
	}
	if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("dir mode: %v %v", fi.Mode(), err)
	}
	var last uint64
	for i, label := range []string{"stdout", "stderr"} {
		f, err := Create(d, label)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		fi, err := os.Stat(f.Name())
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("file mode: %v %v", fi, err)
		}
		// The shape, with our tmpdir spelled as upstream's /tmp.
		asTmp := "/tmp/" + filepath.Base(d) + "/" + filepath.Base(f.Name())
		if Pattern.FindString(asTmp) != asTmp {
			t.Errorf("Create(%q) = %q, not upstream's shape", label, f.Name())
		}
		parts := strings.Split(filepath.Base(f.Name()), "-")
		if parts[2] != strconv.Itoa(os.Getpid()) || !strings.HasSuffix(f.Name(), "-"+label+".log") {
			t.Errorf("Create(%q) = %q: want pid %d and label", label, f.Name(), os.Getpid())
		}
		n, _ := strconv.ParseUint(parts[3], 10, 64)
		if i > 0 && n != last+1 {
			t.Errorf("counter went %d -> %d, want +1 per file", last, n)
		}
		last = n
	}
}

// TestMkdtemp: Node's spelling (prefix and six letters or digits), mode
// 0700, a new name each time; a parent that is missing is an error, not a
// hundred tries.
func TestMkdtemp(t *testing.T) {
	dir := t.TempDir()
	seen := map[string]bool{}
	name := regexp.MustCompile(`^acp-snap-cwd-[A-Za-z0-9]{6}$`)
	for range 20 {
		d, err := Mkdtemp(dir, "acp-snap-cwd-")
		if err != nil {
			t.Fatal(err)
		}
		if !name.MatchString(filepath.Base(d)) || filepath.Dir(d) != dir {
			t.Fatalf("Mkdtemp = %q, want %s/acp-snap-cwd-XXXXXX", d, dir)
		}
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Fatalf("%s: %v %v, want a 0700 directory", d, fi, err)
		}
		if seen[d] {
			t.Fatalf("Mkdtemp made %s twice", d)
		}
		seen[d] = true
	}
	if _, err := Mkdtemp(filepath.Join(dir, "missing"), "x-"); err == nil || strings.Contains(err.Error(), "tries") {
		t.Errorf("Mkdtemp in a missing directory: %v, want the mkdir error", err)
	}
}
