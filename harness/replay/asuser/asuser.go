package asuser

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Nobody is the uid and gid the tests run as.
const Nobody = 65534

// Run describes one run as another user.
type Run struct {
	// Tests are the top-level test names to run (each must pass).
	Tests []string
	// Executables are copied beside the test binary (readable by the user);
	// Env gets NAME=<copied path> for each key.
	Executables map[string]string
	// Dir is the working directory of the run ("" = the caller's, so that
	// relative paths to testdata keep working).
	Dir string
	// Groups are supplementary groups the user holds in the run (none
	// when empty).
	Groups []uint32
	// Env is added to the run's environment (NAME=value entries).
	Env []string
}

// RunTests runs r as uid and gid [Nobody] and returns the combined output.
func RunTests(t *testing.T, r Run) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skipf("needs root (CAP_SETUID) to run %s as uid %d", strings.Join(r.Tests, ", "), Nobody)
	}
	dir, err := os.MkdirTemp("", "dshsim-asuser-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, filepath.Base(self))
	if err := CopyExecutable(self, bin); err != nil {
		t.Fatal(err)
	}
	env := append([]string{"PATH=/usr/bin:/bin", "HOME=" + dir}, r.Env...)
	for key, src := range r.Executables {
		dst := filepath.Join(dir, filepath.Base(src))
		if err := CopyExecutable(src, dst); err != nil {
			t.Fatal(err)
		}
		env = append(env, key+"="+dst)
	}
	wd := r.Dir
	if wd == "" {
		if wd, err = os.Getwd(); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "-test.run", "^("+strings.Join(r.Tests, "|")+")$", "-test.v", "-test.count=1")
	cmd.Dir, cmd.Env = wd, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: Nobody, Gid: Nobody, Groups: r.Groups}}
	b, err := cmd.CombinedOutput()
	out := string(b)
	if err != nil {
		t.Fatalf("as uid %d: %v\n%s", Nobody, err, out)
	}
	for _, name := range r.Tests {
		if !strings.Contains(out, "--- PASS: "+name+" ") {
			t.Errorf("%s did not pass as uid %d:\n%s", name, Nobody, out)
		}
	}
	if strings.Contains(out, "--- SKIP") {
		t.Errorf("a test skipped as uid %d:\n%s", Nobody, out)
	}
	return out
}

// CopyExecutable copies src to a new file dst with mode 0755.
func CopyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return out.Close()
}
