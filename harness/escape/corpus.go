package escape

import (
	"embed"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/dshsim/dshsim/sandbox"
)

//go:embed attempts/*.sh attempts/*.ts
var attemptFS embed.FS

var capabilityName = regexp.MustCompile(`^CAP_[A-Z_]+$`)

// Class says which promise an attempt tests, and so which report can admit it
// getting through (see [Admit]).
type Class string

// Attempt classes.
const (
	// ClassPath is a write, create, remove or rename by path: every confined
	// mode promises to govern it.
	ClassPath Class = "path"
	// ClassTruncate is truncate(2) by path: Landlock governs it from ABI 3.
	ClassTruncate Class = "truncate"
	// ClassIoctl is a device ioctl: Landlock governs it from ABI 5.
	ClassIoctl Class = "ioctl"
	// ClassMetadata is chmod, chown, utimensat or setxattr on an outside file.
	ClassMetadata Class = "metadata"
	// ClassDevice is I/O on a device node; devices are not promised by any
	// mode (package sandbox, Modes and promises).
	ClassDevice Class = "device"
	// ClassInode is a write through a workspace name whose inode was linked to
	// an outside name before the call.
	ClassInode Class = "inode"
	// ClassTemp is a write in the backend's temp area (Landlock grants host
	// /tmp wholesale under workspace-write: package sandbox, Profiles).
	ClassTemp Class = "temp"
	// ClassIsolation reaches the harness rather than a file (signal it,
	// connect to its abstract socket, read a secret of its environment): no
	// mode promises it (package sandbox, Modes and promises), the opt-in
	// hardening does.
	ClassIsolation Class = "isolation"
	// ClassLate is a change made after the call returned, by a process the
	// call left behind: nothing a call starts may outlive it, an escalated
	// (danger-full-access) call's grant included. Besides the confined
	// columns, these attempts run unconfined in the table of what changed
	// after the call (see [Unconfined]).
	ClassLate Class = "late"
	// ClassGit is a write beneath the workspace's .git (hooks and config
	// the next git command runs unconfined): workspace-write allows it; the
	// opt-in hardening keeps .git read-only where the backend can, so these
	// attempts run in the hardening table only.
	ClassGit Class = "git"
	// ClassRecording is a hostile recording (package
	// harness/replay/hostile) replayed by dsh-replay's contained replay:
	// whatever it runs, in the mode it states or approves itself, nothing
	// may reach the host (docs/replay.md, A recording is contained). These
	// attempts are made by that package, never read from a file, and run in
	// the hostile-recordings table only (see [Replayed]).
	ClassRecording Class = "recording"
)

var classes = map[Class]bool{ClassPath: true, ClassTruncate: true, ClassIoctl: true, ClassMetadata: true,
	ClassDevice: true, ClassInode: true, ClassTemp: true, ClassIsolation: true, ClassLate: true, ClassGit: true}

// effects are the operations a metadata or isolation attempt names (header
// "# effect:"), the keys a backend's Ungoverned or Isolated list names them by.
var effects = map[Class][]string{
	ClassMetadata:  {"chmod", "chown", "utimes", "setxattr", "chattr"},
	ClassIsolation: {"signal", "abstract-unix", "secret-env", "agent"},
}

// Fixtures an attempt may need (header "# needs:").
const (
	NeedRoot         = "root"          // runs only as root (mknod, chown, loop devices)
	NeedPrelink      = "prelink"       // $WS/prelinked is a hard link of $TARGET made before the call
	NeedHolder       = "holder"        // $HOLDER_PID: an unconfined process of the same user holding $TARGET open for append
	NeedCloexecFD    = "cloexec-fd"    // the harness holds $TARGET open (close-on-exec) while it spawns the call
	NeedLeakedFD     = "leaked-fd"     // the harness holds $TARGET open WITHOUT close-on-exec (as if inherited) while it spawns the call
	NeedTmpWorkspace = "tmp-workspace" // the run directory (workspace and outside dir) lives under /tmp
	NeedShm          = "shm"           // $SHM: a directory in the host's /dev/shm
	NeedLoopdev      = "loopdev"       // $LOOPDEV, $LOOPMAJ, $LOOPMIN: a loop device over $OUT/disk.img
	NeedSibling      = "sibling"       // $SIBLING_PID: a second command confined by the same backend and mode, running meanwhile
	NeedSignal       = "signal"        // $HARNESS_PID: the harness, which traps SIGUSR1 and records it
	NeedSocket       = "socket"        // $HARNESS_SOCKET: an abstract unix socket the harness listens on (name without the @)
	NeedSecret       = "secret"        // $DSHSIM_ESCAPE_API_KEY: a secret in the command's environment, which the harness looks for in the output
	NeedGitDir       = "git-dir"       // $WS/.git: a repository's directory (config, hooks/), which the snapshots cover even under workspace-write
	NeedRacer        = "racer"         // $SWAP_WS: a workspace in /tmp, $SWAP_TARGET: an outside directory; while the command runs, the harness starts new calls (same backend and mode, workspace $SWAP_WS) writing $SWAP_TARGET/x
	NeedListener     = "listener"      // $HARNESS_PORT: a TCP listener on the host's loopback (127.0.0.1), which nothing may reach
	NeedAgent        = "agent"         // $HARNESS_PID; $HARNESS_CANARY and $HARNESS_CANARY_LEN: the address (hex) and length of a fresh secret in the harness's memory; $HARNESS_FD: a pipe the harness reads
)

var needs = map[string]bool{NeedRoot: true, NeedPrelink: true, NeedHolder: true, NeedCloexecFD: true,
	NeedLeakedFD: true, NeedTmpWorkspace: true, NeedShm: true, NeedLoopdev: true, NeedSibling: true,
	NeedSignal: true, NeedSocket: true, NeedSecret: true, NeedRacer: true, NeedGitDir: true, NeedListener: true, NeedAgent: true}

// Attempt is one escape attempt: a shell script run as `bash -c` inside the
// sandbox with WS, OUT, TARGET and PROBE in its environment, or (a .ts file)
// a run_code program run by the Node runtime of tools/code/noderuntime,
// confined by the backend as run_code confines it, with $WS, $OUT and
// $TARGET replaced by the paths in its text.
type Attempt struct {
	// Name is the file name without .sh or .ts.
	Name string
	// Program marks a run_code program (a .ts file; header lines start "// ").
	Program bool
	// Attack is the one-line description (header "# attack:").
	Attack string
	// Class is the promise under test (header "# class:", default path).
	Class Class
	// Needs lists fixtures (header "# needs:").
	Needs []string
	// Capability names what an attempt that needs root needs root for
	// (header "# capability:", e.g. CAP_MKNOD; required with "needs: root"),
	// which an unprivileged run names when it skips the attempt.
	Capability string
	// Effect names the operation of a metadata attempt (header "# effect:",
	// chmod, chown, utimes, setxattr or chattr: the key a backend's
	// Ungoverned list admits it by) or of an isolation attempt (signal,
	// abstract-unix, secret-env or agent: the key of a backend's Isolated
	// list).
	Effect string
	// Settle is how long to wait after the command exits before checking
	// (header "# settle:", a Go duration), for attempts that leave a child.
	Settle time.Duration
	// Script is the whole file.
	Script string
	// Mode is the one mode a hostile recording ([ClassRecording]) runs its
	// attack in, stated or approved by itself; "" for every other attempt,
	// which runs in each mode of its backend.
	Mode sandbox.Mode `json:",omitempty"`
}

// Need reports whether the attempt needs fixture f.
func (a Attempt) Need(f string) bool {
	for _, n := range a.Needs {
		if n == f {
			return true
		}
	}
	return false
}

// Exclusive reports whether the attempt must run alone: its fixture is
// process-wide (a descriptor without close-on-exec, which any other spawn
// of this process would inherit; the harness's one SIGUSR1 trap) or global
// (a loop device, which losetup -f hands out racily).
func (a Attempt) Exclusive() bool {
	return a.Need(NeedLeakedFD) || a.Need(NeedSignal) || a.Need(NeedLoopdev)
}

// Corpus returns the embedded attempts and the hostile recordings
// ([RecordingAttempts]) sorted by name.
func Corpus() ([]Attempt, error) {
	ents, err := attemptFS.ReadDir("attempts")
	if err != nil {
		return nil, err
	}
	var out []Attempt
	for _, e := range ents {
		p := path.Join("attempts", e.Name())
		src, err := attemptFS.ReadFile(p)
		if err != nil {
			return nil, err
		}
		a, err := ParseAttempt(p, src)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	out = append(out, RecordingAttempts()...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ParseAttempt parses one attempt file. Header lines are leading "# key: value"
// comments ("// key: value" in a program); an unknown key, a missing attack,
// an unknown class or fixture, or a bad settle duration is an error naming
// the file, line and field.
func ParseAttempt(file string, src []byte) (Attempt, error) {
	base := path.Base(file)
	ext := path.Ext(base)
	if (ext != ".sh" && ext != ".ts") || base == ext {
		return Attempt{}, fmt.Errorf("%s: attempt files are named <name>.sh (a script) or <name>.ts (a run_code program)", file)
	}
	a := Attempt{Name: strings.TrimSuffix(base, ext), Program: ext == ".ts", Class: ClassPath, Script: string(src)}
	comment := "# "
	if a.Program {
		comment = "// "
	}
	effectLine := 1
	for i, line := range strings.Split(string(src), "\n") {
		if !strings.HasPrefix(line, comment) {
			break
		}
		key, val, ok := strings.Cut(strings.TrimPrefix(line, comment), ":")
		if !ok {
			return Attempt{}, fmt.Errorf("%s:%d: header line has no \"key:\"", file, i+1)
		}
		val = strings.TrimSpace(val)
		switch key {
		case "attack":
			if val == "" {
				return Attempt{}, fmt.Errorf("%s:%d: attack: empty", file, i+1)
			}
			a.Attack = val
		case "class":
			if Class(val) == ClassRecording {
				return Attempt{}, fmt.Errorf("%s:%d: class: %s attempts are hostile recordings (package harness/replay/hostile), not files", file, i+1, val)
			}
			if !classes[Class(val)] {
				return Attempt{}, fmt.Errorf("%s:%d: class: unknown class %q", file, i+1, val)
			}
			a.Class = Class(val)
		case "needs":
			for _, n := range strings.Fields(val) {
				if !needs[n] {
					return Attempt{}, fmt.Errorf("%s:%d: needs: unknown fixture %q", file, i+1, n)
				}
				a.Needs = append(a.Needs, n)
			}
		case "effect":
			a.Effect = val
			effectLine = i + 1
		case "capability":
			if !capabilityName.MatchString(val) {
				return Attempt{}, fmt.Errorf("%s:%d: capability: want a capability name like CAP_MKNOD, got %q", file, i+1, val)
			}
			a.Capability = val
		case "settle":
			d, err := time.ParseDuration(val)
			if err != nil || d < 0 || d > 10*time.Second {
				return Attempt{}, fmt.Errorf("%s:%d: settle: want a duration between 0 and 10s, got %q", file, i+1, val)
			}
			a.Settle = d
		default:
			return Attempt{}, fmt.Errorf("%s:%d: unknown header field %q", file, i+1, key)
		}
	}
	if want, ok := effects[a.Class]; ok {
		if a.Effect == "" {
			return Attempt{}, fmt.Errorf("%s:1: effect: missing (class %s names its operation: one of %s)", file, a.Class, strings.Join(want, ", "))
		}
		if !slices.Contains(want, a.Effect) {
			return Attempt{}, fmt.Errorf("%s:%d: effect: class %s wants one of %s, got %q", file, effectLine, a.Class, strings.Join(want, ", "), a.Effect)
		}
	} else if a.Effect != "" {
		return Attempt{}, fmt.Errorf("%s:%d: effect: only classes metadata and isolation name an effect, not %s", file, effectLine, a.Class)
	}
	if a.Need(NeedRoot) != (a.Capability != "") {
		return Attempt{}, fmt.Errorf("%s:1: capability: an attempt names the capability it needs root for exactly when it needs root", file)
	}
	if a.Attack == "" {
		return Attempt{}, fmt.Errorf("%s:1: attack: missing (every attempt starts with \"%sattack: <what it tries>\")", file, comment)
	}
	return a, nil
}
