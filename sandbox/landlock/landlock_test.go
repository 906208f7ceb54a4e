package landlock

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/dshsim/dshsim/internal/waittest"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    Invocation
		wantErr string
	}{
		{name: "no arguments is a missing command", args: nil, wantErr: "usage error: missing `-- <argv>...` command"},
		{name: "unknown flag is named", args: []string{"--bogus"}, wantErr: "usage error: unknown argument: --bogus"},
		{name: "ro without a path", args: []string{"--ro"}, wantErr: "usage error: --ro requires a path"},
		{name: "rw without a path", args: []string{"--rw"}, wantErr: "usage error: --rw requires a path"},
		{name: "probe with a grant", args: []string{"--probe", "--ro", "/"}, wantErr: "usage error: --probe takes no other arguments"},
		{name: "probe after a grant", args: []string{"--ro", "/", "--probe"}, wantErr: "usage error: --probe takes no other arguments"},
		{name: "probe with double dash", args: []string{"--probe", "--"}, wantErr: "usage error: --probe takes no other arguments"},
		{name: "probe twice", args: []string{"--probe", "--probe"}, wantErr: "usage error: --probe takes no other arguments"},
		{name: "nothing after double dash", args: []string{"--ro", "/", "--"}, wantErr: "usage error: missing `-- <argv>...` command"},
		{name: "grants without double dash", args: []string{"--ro", "/"}, wantErr: "usage error: missing `-- <argv>...` command"},
		{name: "abi cap needs a value", args: []string{"--abi-cap"}, wantErr: "usage error: --abi-cap requires a positive integer"},
		{name: "abi cap rejects zero", args: []string{"--abi-cap", "0", "--", "true"}, wantErr: `usage error: --abi-cap requires a positive integer, got "0"`},
		{name: "abi cap rejects words", args: []string{"--abi-cap", "x", "--", "true"}, wantErr: `usage error: --abi-cap requires a positive integer, got "x"`},
		{name: "sole probe", args: []string{"--probe"}, want: Invocation{Probe: true}},
		{name: "sole abi report", args: []string{"--abi"}, want: Invocation{ABI: true}},
		{name: "interleaved grants keep their order per kind", args: []string{"--rw", "/a", "--ro", "/", "--rw", "/b", "--ro", "/c", "--", "echo", "--ro"},
			want: Invocation{RO: []string{"/", "/c"}, RW: []string{"/a", "/b"}, Argv: []string{"echo", "--ro"}}},
		{name: "probe after double dash belongs to the command", args: []string{"--", "echo", "--probe"}, want: Invocation{Argv: []string{"echo", "--probe"}}},
		{name: "scope is parsed", args: []string{"--scope", "--ro", "/", "--", "true"}, want: Invocation{Scope: true, RO: []string{"/"}, Argv: []string{"true"}}},
		{name: "probe with scope", args: []string{"--probe", "--scope"}, wantErr: "usage error: --probe takes no other arguments"},
		{name: "rw-inode grants and pins its path", args: []string{"--rw", "/a", "--rw-inode", "/ws", "2049:77", "--", "true"},
			want: Invocation{RW: []string{"/a", "/ws"}, Inodes: map[string]FileID{"/ws": {Dev: 2049, Ino: 77}}, Argv: []string{"true"}}},
		{name: "rw-inode without its id", args: []string{"--rw-inode", "/ws"}, wantErr: "usage error: --rw-inode requires a path and its <device>:<inode>"},
		{name: "rw-inode with a bad id", args: []string{"--rw-inode", "/ws", "2049", "--", "true"}, wantErr: `usage error: --rw-inode /ws: want <device>:<inode> (two decimal numbers), got "2049"`},
		{name: "rw-inode with a negative inode", args: []string{"--rw-inode", "/ws", "1:-2", "--", "true"}, wantErr: `usage error: --rw-inode /ws: want <device>:<inode> (two decimal numbers), got "1:-2"`},
		{name: "abi cap is parsed", args: []string{"--abi-cap", "3", "--ro", "/", "--", "true"}, want: Invocation{ABICap: 3, RO: []string{"/"}, Argv: []string{"true"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.args)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Parse(%q) error = %v, want %q", tc.args, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.args, err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tc.args, d)
			}
		})
	}
}

func TestRightsTable(t *testing.T) {
	tests := []struct {
		name string
		abi  int
		want uint64
	}{
		{name: "no abi governs nothing", abi: 0, want: 0},
		{name: "abi 1 is the 13 basic rights", abi: 1, want: 1<<13 - 1},
		{name: "abi 2 adds refer", abi: 2, want: 1<<14 - 1},
		{name: "abi 3 adds truncate", abi: 3, want: 1<<15 - 1},
		{name: "abi 4 adds no filesystem right", abi: 4, want: 1<<15 - 1},
		{name: "abi 5 adds device ioctl", abi: 5, want: 1<<16 - 1},
		{name: "abi 7 is handled as 5", abi: 7, want: 1<<16 - 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Handled(tc.abi); got != tc.want {
				t.Errorf("Handled(%d) = %s, want %s", tc.abi, RightsString(got), RightsString(tc.want))
			}
		})
	}
	// The constants are the kernel's (cross-checked against go-landlock).
	pairs := [][2]uint64{{AccessExecute, ll.AccessFSExecute}, {AccessWriteFile, ll.AccessFSWriteFile}, {AccessReadFile, ll.AccessFSReadFile},
		{AccessReadDir, ll.AccessFSReadDir}, {AccessMakeSym, ll.AccessFSMakeSym}, {AccessRefer, ll.AccessFSRefer},
		{AccessTruncate, ll.AccessFSTruncate}, {AccessIoctlDev, ll.AccessFSIoctlDev}}
	for _, p := range pairs {
		if p[0] != p[1] {
			t.Errorf("right %s != go-landlock %s", RightsString(p[0]), RightsString(p[1]))
		}
	}
	for abi := 2; abi <= 7; abi++ {
		if Handled(abi)&Handled(abi-1) != Handled(abi-1) {
			t.Errorf("Handled(%d) drops rights of ABI %d", abi, abi-1)
		}
	}
}

func TestRightsPerGrant(t *testing.T) {
	tests := []struct {
		name string
		got  uint64
		want uint64
	}{
		{name: "ro grants read and execute only", got: ReadOnlyRights(Handled(5)), want: AccessExecute | AccessReadFile | AccessReadDir},
		{name: "rw on a file keeps file rights only", got: ForFile(ReadWriteRights(Handled(5))), want: AccessExecute | AccessWriteFile | AccessReadFile | AccessTruncate | AccessIoctlDev},
		{name: "rw grants everything handled but device nodes", got: ReadWriteRights(Handled(5)), want: Handled(5) &^ (AccessMakeChar | AccessMakeBlock)},
		{name: "device nodes stay handled, so they are denied everywhere", got: Handled(1) & (AccessMakeChar | AccessMakeBlock), want: AccessMakeChar | AccessMakeBlock},
		{name: "rw on a file under abi 1 has no truncate", got: ForFile(Handled(1)), want: AccessExecute | AccessWriteFile | AccessReadFile},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %s, want %s", RightsString(tc.got), RightsString(tc.want))
			}
		})
	}
}

func TestEffectiveABI(t *testing.T) {
	tests := []struct {
		name                 string
		kernel, abiCap, want int
		wantPartial          bool
	}{
		{name: "no cap on abi 7 uses 5, full", kernel: 7, want: 5},
		{name: "cap narrows", kernel: 7, abiCap: 3, want: 3, wantPartial: true},
		{name: "cap never widens", kernel: 2, abiCap: 6, want: 2, wantPartial: true},
		{name: "abi 4 is partial", kernel: 4, want: 4, wantPartial: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := EffectiveABI(tc.kernel, tc.abiCap)
			if got != tc.want || Partial(got) != tc.wantPartial {
				t.Errorf("EffectiveABI(%d, %d) = %d partial=%v, want %d partial=%v", tc.kernel, tc.abiCap, got, Partial(got), tc.want, tc.wantPartial)
			}
		})
	}
}

func TestStrerrorIsCapitalisedLikeC(t *testing.T) {
	for errno, want := range map[syscall.Errno]string{syscall.ENOENT: "No such file or directory", syscall.EINVAL: "Invalid argument", syscall.EACCES: "Permission denied"} {
		if got := Strerror(errno); got != want {
			t.Errorf("Strerror(%d) = %q, want %q", errno, got, want)
		}
	}
}

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// workspace returns a fresh directory outside /tmp: the runner's callers grant
// /tmp wholesale in workspace-write, so a workspace under /tmp (where
// t.TempDir lives) could not show the workspace boundary.
func workspace(t *testing.T) string { return sandboxtest.TempDir(t, "dshsim-llrun-") }

func requireLandlock(t *testing.T) int { return sandboxtest.RequireLandlock(t, 1) }

// TestRunConfinesTheExecStep runs the real restriction on a thread of the
// test process with an exec step that tries writes instead of replacing the
// process: the write beneath --rw lands, the write beside it is refused.
func TestRunConfinesTheExecStep(t *testing.T) {
	requireLandlock(t)
	ws, outside := workspace(t), workspace(t)
	var inside, beside error
	var stdout, stderr bytes.Buffer
	code := Run([]string{"--ro", "/", "--rw", ws, "--", "probe-writes"}, &stdout, &stderr, func(argv []string) error {
		if diff := cmp.Diff([]string{"probe-writes"}, argv); diff != "" {
			t.Errorf("exec argv (-want +got):\n%s", diff)
		}
		inside = os.WriteFile(filepath.Join(ws, "in.txt"), []byte("x"), 0o644)
		beside = os.WriteFile(filepath.Join(outside, "out.txt"), []byte("x"), 0o644)
		return syscall.ENOEXEC
	})
	if code != ExitFailure || stderr.String() != "landlock-run: exec failed: Exec format error\n" {
		t.Errorf("Run = %d, stderr %q", code, stderr.String())
	}
	if inside != nil {
		t.Errorf("write inside the --rw grant failed: %v", inside)
	}
	if !errors.Is(beside, syscall.EACCES) {
		t.Errorf("write outside the grants = %v, want EACCES", beside)
	}
	if _, err := os.Stat(filepath.Join(outside, "out.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("denied file exists on disk: %v", err)
	}
	// The test's own threads stay unconfined.
	if err := os.WriteFile(filepath.Join(outside, "after.txt"), []byte("x"), 0o644); err != nil {
		t.Errorf("parent write after the run: %v", err)
	}
}

// TestRunRefusesDeviceNodesInTheWorkspace: a --rw grant does not allow
// mknod of a character or block device (as root it would open the host's disk
// through the workspace), but still allows a fifo.
func TestRunRefusesDeviceNodesInTheWorkspace(t *testing.T) {
	requireLandlock(t)
	if os.Geteuid() != 0 {
		t.Skip("mknod of a device needs CAP_MKNOD: run as root to see Landlock refuse it")
	}
	ws := workspace(t)
	var blk, chr, fifo error
	var stdout, stderr bytes.Buffer
	Run([]string{"--ro", "/", "--rw", ws, "--", "probe"}, &stdout, &stderr, func([]string) error {
		blk = syscall.Mknod(filepath.Join(ws, "disk"), syscall.S_IFBLK|0o600, 7<<8)
		chr = syscall.Mknod(filepath.Join(ws, "null"), syscall.S_IFCHR|0o600, 1<<8|3)
		fifo = syscall.Mknod(filepath.Join(ws, "pipe"), syscall.S_IFIFO|0o600, 0)
		return syscall.ENOEXEC
	})
	if !errors.Is(blk, syscall.EACCES) || !errors.Is(chr, syscall.EACCES) {
		t.Errorf("mknod block = %v, char = %v; want EACCES for both", blk, chr)
	}
	if fifo != nil {
		t.Errorf("mknod fifo beneath --rw = %v, want allowed", fifo)
	}
}

func TestRunCappedABIPrintsThePartialNotice(t *testing.T) {
	requireLandlock(t)
	var stdout, stderr bytes.Buffer
	ran := false
	code := Run([]string{"--abi-cap", "2", "--ro", "/", "--", "true"}, &stdout, &stderr, func([]string) error { ran = true; return syscall.ENOENT })
	if !ran || code != ExitFailure {
		t.Fatalf("ran=%v code=%d", ran, code)
	}
	want := PartialNotice + "\nlandlock-run: exec failed: No such file or directory\n"
	if stderr.String() != want {
		t.Errorf("stderr = %q, want %q", stderr.String(), want)
	}
}

func TestRunFailsClosed(t *testing.T) {
	requireLandlock(t)
	linked := linkedDir(t)
	tests := []struct {
		name       string
		args       []string
		wantStderr string
	}{
		{name: "unopenable rule path never runs the command", args: []string{"--ro", "/", "--rw", "/nonexistent/dshsim", "--", "true"},
			wantStderr: "landlock-run: cannot open rule path: /nonexistent/dshsim: No such file or directory\n"},
		{name: "a rule path through a symlink never runs the command", args: []string{"--ro", "/", "--rw", linked, "--", "true"},
			wantStderr: "landlock-run: cannot open rule path: " + linked + ": a component is a symbolic link (rule paths are opened without following links)\n"},
		{name: "a rule path that is a symlink never runs the command", args: []string{"--ro", "/", "--rw", filepath.Dir(linked), "--", "true"},
			wantStderr: "landlock-run: cannot open rule path: " + filepath.Dir(linked) + ": a component is a symbolic link (rule paths are opened without following links)\n"},
		{name: "a pinned rule path that is another directory never runs the command", args: []string{"--ro", "/", "--rw-inode", "/", "1:1", "--", "true"},
			wantStderr: "landlock-run: rule path changed since it was checked: / is now the file " + fileID(t, "/").String() + ", not 1:1; refusing to grant it\n"},
		{name: "usage error never runs the command", args: []string{"--bogus", "--", "true"},
			wantStderr: "landlock-run: usage error: unknown argument: --bogus\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Run(tc.args, &stdout, &stderr, func([]string) error { t.Error("command ran"); return nil })
			if code != ExitFailure || stderr.String() != tc.wantStderr || stdout.Len() != 0 {
				t.Errorf("Run = %d, stdout %q, stderr %q, want 125 and %q", code, stdout.String(), stderr.String(), tc.wantStderr)
			}
		})
	}
}

// linkedDir returns a directory reached through a symlink: <dir>/link/sub,
// where link points at <dir>/real; the symlink is link.
func linkedDir(t *testing.T) string {
	t.Helper()
	dir := workspace(t)
	os.MkdirAll(filepath.Join(dir, "real", "sub"), 0o755)
	if err := os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "link", "sub")
}

func fileID(t *testing.T, path string) FileID {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return FileID{Dev: uint64(st.Dev), Ino: st.Ino}
}

// TestRulePathPinnedToTheCheckedDirectory: --rw-inode grants a path that
// opens as the directory named, and refuses (the command never runs) the
// same path once another directory took its place, as a command that moved
// the workspace away and made a new one would.
func TestRulePathPinnedToTheCheckedDirectory(t *testing.T) {
	requireLandlock(t)
	base := workspace(t)
	ws := filepath.Join(base, "ws")
	os.Mkdir(ws, 0o755)
	id := fileID(t, ws)
	var stdout, stderr bytes.Buffer
	inside := errors.New("the command did not run")
	code := Run([]string{"--ro", "/", "--rw-inode", ws, id.String(), "--", "probe"}, &stdout, &stderr, func([]string) error {
		inside = os.WriteFile(filepath.Join(ws, "in.txt"), []byte("x"), 0o644)
		return syscall.ENOEXEC
	})
	if code != ExitFailure || stderr.String() != "landlock-run: exec failed: Exec format error\n" || inside != nil {
		t.Fatalf("pinned grant of the checked directory: code=%d stderr=%q, write beneath it: %v", code, stderr.String(), inside)
	}
	os.Rename(ws, ws+".d")
	os.Mkdir(ws, 0o755)
	stderr.Reset()
	code = Run([]string{"--ro", "/", "--rw-inode", ws, id.String(), "--", "probe"}, &stdout, &stderr, func([]string) error { t.Error("the command ran"); return nil })
	want := "landlock-run: rule path changed since it was checked: " + ws + " is now the file " + fileID(t, ws).String() + ", not " + id.String() + "; refusing to grant it\n"
	if code != ExitFailure || stderr.String() != want {
		t.Errorf("Run = %d, stderr %q, want 125 and %q", code, stderr.String(), want)
	}
}

// TestRuleOpenError: the fatal line of a rule path that cannot be opened
// names the path and why; a kernel without openat2 has no fallback that
// follows links.
func TestRuleOpenError(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{syscall.ENOENT, "cannot open rule path: /ws: No such file or directory"},
		{syscall.ELOOP, "cannot open rule path: /ws: a component is a symbolic link (rule paths are opened without following links)"},
		{syscall.ENOSYS, "cannot open rule path: /ws: openat2 is not available (Function not implemented), and rule paths are opened only without following links"},
		{syscall.EACCES, "cannot open rule path: /ws: Permission denied"},
	}
	for _, tc := range tests {
		if got := ruleOpenError("/ws", tc.err).Error(); got != tc.want {
			t.Errorf("ruleOpenError(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestProbeOutput(t *testing.T) {
	abi := requireLandlock(t)
	var stdout, stderr bytes.Buffer
	code := Main([]string{"--probe"}, &stdout, &stderr)
	if code != 0 || stderr.Len() != 0 {
		t.Fatalf("--probe = %d, stderr %q", code, stderr.String())
	}
	if !regexp.MustCompile(`^landlock: (fully enforced|partially enforced \(older ABI\))\n$`).MatchString(stdout.String()) {
		t.Errorf("probe stdout %q does not match the contract", stdout.String())
	}
	want := ProbeFull + "\n"
	if Partial(EffectiveABI(abi, 0)) {
		want = ProbePartial + "\n"
	}
	if stdout.String() != want {
		t.Errorf("probe on ABI %d = %q, want %q", abi, stdout.String(), want)
	}
}

// TestABITableInvariant checks the data table itself: row 0 (no ABI) grants
// nothing, each right is introduced by exactly one ABI, and together the rows
// are exactly the rights this package names.
func TestABITableInvariant(t *testing.T) {
	if abiRights[0] != 0 {
		t.Errorf("ABI 0 handles %s, want nothing", RightsString(abiRights[0]))
	}
	var seen uint64
	for abi := 1; abi <= MaxABI; abi++ {
		if dup := abiRights[abi] & seen; dup != 0 {
			t.Errorf("ABI %d re-introduces %s", abi, RightsString(dup))
		}
		seen |= abiRights[abi]
	}
	if all := uint64(1)<<len(rightNames) - 1; seen != all {
		t.Errorf("the table covers %s, the named rights are %s", RightsString(seen), RightsString(all))
	}
}

// TestInitMainRefusesOffTheStartupThread: InitMain takes no thread lock of
// its own, so off the startup thread (where nothing pins the goroutine
// between restriction and exec) it must refuse before restricting, and the
// command must not run.
func TestInitMainRefusesOffTheStartupThread(t *testing.T) {
	requireLandlock(t)
	ws := workspace(t)
	type result struct {
		code           int
		stderr         string
		ran, onStartup bool
	}
	done := make(chan result, 1)
	GoOffMainThread(func() {
		var stdout, stderr bytes.Buffer
		ran := false
		code := status([]string{"--ro", "/", "--rw", ws, "--", "true"}, options{stdout: &stdout, stderr: &stderr, exec: func([]string) error { ran = true; return syscall.ENOEXEC }, restrictHere: restrictStartupThread})
		done <- result{code, stderr.String(), ran, syscall.Gettid() == syscall.Getpid()}
	})
	r := waittest.Recv(t, done, "the job run off the startup thread")
	if r.onStartup {
		t.Fatal("GoOffMainThread ran the job on the startup thread")
	}
	if want := Prefix + notStartupThreadMsg + "\n"; r.code != ExitFailure || r.stderr != want || r.ran {
		t.Errorf("off the startup thread: exit %d, stderr %q, command ran %v; want 125, %q, not run", r.code, r.stderr, r.ran, want)
	}
}

func TestSearchPath(t *testing.T) {
	tests := []struct {
		name    string
		cmd     string
		path    *string // nil: PATH unset
		fails   map[string]error
		want    error
		wantTry []string
	}{
		{name: "empty name is not found without a try", cmd: "", path: ptr("/bin"), want: syscall.ENOENT},
		{name: "a name with a slash is used as is", cmd: "./x", path: ptr("/bin"), fails: map[string]error{"./x": syscall.EPERM}, want: syscall.EPERM, wantTry: []string{"./x"}},
		{name: "unset PATH searches /bin then /usr/bin", cmd: "x", path: nil, want: syscall.ENOENT, wantTry: []string{"/bin/x", "/usr/bin/x"}},
		{name: "empty PATH has no entries", cmd: "x", path: ptr(""), want: syscall.ENOENT},
		{name: "an empty entry is the current directory", cmd: "x", path: ptr("/a::/b"), want: syscall.ENOENT, wantTry: []string{"/a/x", "./x", "/b/x"}},
		{name: "EACCES is remembered past later misses", cmd: "x", path: ptr("/a:/b"), fails: map[string]error{"/a/x": syscall.EACCES}, want: syscall.EACCES, wantTry: []string{"/a/x", "/b/x"}},
		{name: "another error stops the search", cmd: "x", path: ptr("/a:/b"), fails: map[string]error{"/a/x": syscall.E2BIG}, want: syscall.E2BIG, wantTry: []string{"/a/x"}},
		{name: "ENOTDIR, ESTALE, ENODEV and ETIMEDOUT go on", cmd: "x", path: ptr("/a:/b:/c:/d:/e"),
			fails: map[string]error{"/a/x": syscall.ENOTDIR, "/b/x": syscall.ESTALE, "/c/x": syscall.ENODEV, "/d/x": syscall.ETIMEDOUT}, want: syscall.ENOENT,
			wantTry: []string{"/a/x", "/b/x", "/c/x", "/d/x", "/e/x"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) (string, bool) {
				if k != "PATH" || tc.path == nil {
					return "", false
				}
				return *tc.path, true
			}
			var tried []string
			got := searchPath(tc.cmd, getenv, func(file string) error {
				tried = append(tried, file)
				if err, ok := tc.fails[file]; ok {
					return err
				}
				return syscall.ENOENT
			})
			if got != tc.want {
				t.Errorf("searchPath(%q) = %v, want %v", tc.cmd, got, tc.want)
			}
			if d := cmp.Diff(tc.wantTry, tried); d != "" {
				t.Errorf("tried (-want +got):\n%s", d)
			}
		})
	}
}

func ptr(s string) *string { return &s }

// TestRunnerDropsEveryCapability: the command the real runner confines reads
// its own /proc/self/status; as root it must hold no capability at all
// (before, CapEff was 000001fffeffffff), and no caller gets one back.
func TestRunnerDropsEveryCapability(t *testing.T) {
	requireLandlock(t)
	for _, args := range [][]string{{"--ro", "/", "--"}, {"--abi-cap", "1", "--ro", "/", "--"}} {
		out, err := exec.Command(sandboxtest.Runner(t), append(args, "cat", "/proc/self/status")...).Output()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		sandboxtest.CheckNoCapabilities(t, string(out))
	}
}

func TestScopeAvailable(t *testing.T) {
	tests := []struct {
		kernel, abiCap int
		want           string // "" = available
	}{
		{kernel: 7, want: ""},
		{kernel: 6, want: ""},
		{kernel: 5, want: "--scope needs Landlock ABI 6 (signal and abstract unix socket scoping); the ABI in use is 5"},
		{kernel: 7, abiCap: 6, want: ""},
		{kernel: 7, abiCap: 5, want: "--scope needs Landlock ABI 6 (signal and abstract unix socket scoping); the ABI in use is 5"},
		{kernel: 2, abiCap: 7, want: "--scope needs Landlock ABI 6 (signal and abstract unix socket scoping); the ABI in use is 2"},
	}
	for _, tc := range tests {
		err := ScopeAvailable(tc.kernel, tc.abiCap)
		if got := fmt.Sprint(err); (tc.want == "" && err != nil) || (tc.want != "" && got != tc.want) {
			t.Errorf("ScopeAvailable(%d, %d) = %v, want %q", tc.kernel, tc.abiCap, err, tc.want)
		}
	}
}

// TestScopeKeepsTheCommandFromTheHarness: with --scope the confined exec
// step can neither signal a process outside its domain (a sleep this test
// started, standing in for the harness) nor connect to an abstract unix
// socket this test listens on; without --scope it can do both.
func TestScopeKeepsTheCommandFromTheHarness(t *testing.T) {
	sandboxtest.RequireLandlock(t, ScopeABI)
	sentinel := exec.Command("sleep", "60")
	if err := sentinel.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sentinel.Process.Kill(); sentinel.Wait() })
	name := fmt.Sprintf("@dshsim-scope-test-%d", os.Getpid())
	ln, err := net.Listen("unix", name)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, scope := range []bool{false, true} {
		args := []string{"--ro", "/", "--", "reach-out"}
		if scope {
			args = append([]string{"--scope"}, args...)
		}
		var sigErr, connErr error
		var stderr bytes.Buffer
		Run(args, io.Discard, &stderr, func([]string) error {
			sigErr = syscall.Kill(sentinel.Process.Pid, 0) // permission check only: the sentinel lives on
			c, err := net.Dial("unix", name)
			if err == nil {
				c.Close()
			}
			connErr = err
			return syscall.ENOEXEC
		})
		if scope && (!errors.Is(sigErr, syscall.EPERM) || !errors.Is(connErr, syscall.EPERM)) {
			t.Errorf("--scope: signal %v, connect %v; want EPERM for both (stderr %q)", sigErr, connErr, stderr.String())
		}
		if !scope && (sigErr != nil || connErr != nil) {
			t.Errorf("without --scope: signal %v, connect %v; want both to work", sigErr, connErr)
		}
	}
}

// TestNestRights: the nested layer grants reparenting wherever it can
// handle it (from ABI 2), scopes signals only with scopes, and is never
// empty.
func TestNestRights(t *testing.T) {
	for _, tc := range []struct {
		abi                      int
		scopes                   bool
		handled, scoped, granted uint64
	}{
		{abi: 1, handled: AccessMakeBlock},
		{abi: 2, handled: AccessRefer, granted: AccessRefer},
		{abi: 5, handled: AccessRefer, granted: AccessRefer},
		{abi: 5, scopes: true, handled: AccessRefer, scoped: ScopeSignal, granted: AccessRefer},
	} {
		h, s, g := NestRights(tc.abi, tc.scopes)
		if h != tc.handled || s != tc.scoped || g != tc.granted {
			t.Errorf("NestRights(%d, %v) = %#x, %#x, %#x; want %#x, %#x, %#x", tc.abi, tc.scopes, h, s, g, tc.handled, tc.scoped, tc.granted)
		}
	}
}
