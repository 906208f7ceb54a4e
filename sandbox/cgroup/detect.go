package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dshsim/dshsim/sandbox/internal/llsys"
)

// Required are the controllers a call's cgroup needs: its memory and its
// processes and threads are bounded there. The CPU time is read from
// cpu.stat, which every cgroup v2 has without any controller.
var Required = []string{"memory", "pids"}

// Host is what [Detect] reads: the files under Root ("/" on a host, a
// fixture tree in a test) and whether this process may write a path.
type Host struct {
	Root string
	// Writable reports whether the caller may write path (nil:
	// faccessat with the effective ids).
	Writable func(path string) bool
}

// Delegation is a cgroup v2 subtree this process may create cgroups in and
// move its children into.
type Delegation struct {
	// Dir is the delegated cgroup's directory (under Host.Root).
	Dir string
	// Enable are the [Required] controllers not yet enabled in Dir's
	// cgroup.subtree_control: [Delegation.Prepare] enables them.
	Enable []string
}

// NoDelegation says why the host delegates no cgroup v2 subtree to this
// process: the caller bounds its calls with resource limits instead.
type NoDelegation struct{ Reason string }

func (e *NoDelegation) Error() string {
	return "no cgroup v2 subtree is delegated to this process: " + e.Reason
}

// Detect finds the cgroup v2 subtree delegated to this process, from the
// files under h.Root: its own v2 cgroup (the "0::" line of
// /proc/self/cgroup), the cgroup2 mount holding it (/proc/self/mountinfo),
// and, in that cgroup's directory and then in its parent's, the
// controllers ([Required] listed in cgroup.controllers, and enabled in
// cgroup.subtree_control or enableable there: the caller may write it and
// the cgroup holds no process, as cgroup v2 allows a non-root cgroup that
// enables controllers for its children none of its own) and the caller's
// write access to the directory (a child cgroup) and to cgroup.procs (a
// process moved into that child). Its own cgroup is taken first; the
// parent is the usual delegation (a delegated cgroup whose processes live
// in a leaf below it). The error is a *NoDelegation saying why none
// qualifies. Pure over the files it reads.
func Detect(h Host) (Delegation, error) {
	if h.Writable == nil {
		h.Writable = llsys.Writable
	}
	own, err := ownCgroup(filepath.Join(h.Root, "proc/self/cgroup"))
	if err != nil {
		return Delegation{}, err
	}
	mountRoot, dir, err := mountOf(h.Root, own)
	if err != nil {
		return Delegation{}, err
	}
	cands := []struct {
		cg, dir string
	}{{own, dir}}
	if own != mountRoot && own != "/" {
		cands = append(cands, struct{ cg, dir string }{path.Dir(own), filepath.Dir(dir)})
	}
	var reasons []string
	for _, c := range cands {
		d, why := qualifies(h, c.dir, c.cg == "/")
		if why == "" {
			return d, nil
		}
		reasons = append(reasons, why)
	}
	return Delegation{}, &NoDelegation{strings.Join(reasons, "; ")}
}

// ownCgroup is the v2 cgroup of the process in file (a /proc/<pid>/cgroup).
// A v1 hierarchy holding a required controller is said as the reason: that
// controller is then in no v2 cgroup.
func ownCgroup(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", &NoDelegation{err.Error()}
	}
	own := ""
	for n, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if line == "" && len(b) == 0 {
			break // no hierarchy shown at all: cgroup v2 was never mounted
		}
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			return "", &NoDelegation{fmt.Sprintf("%s:%d: %q is not hierarchy-ID:controllers:path", file, n+1, line)}
		}
		if f[0] == "0" && f[1] == "" {
			own = f[2]
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			if slices.Contains(Required, c) {
				return "", &NoDelegation{fmt.Sprintf("%s:%d: the %s controller is bound to a cgroup v1 hierarchy", file, n+1, c)}
			}
		}
	}
	if own == "" || !strings.HasPrefix(own, "/") {
		return "", &NoDelegation{file + ": no cgroup v2 line (0::/path)"}
	}
	return path.Clean(own), nil
}

// mountOf finds the cgroup2 mount (in root's /proc/self/mountinfo) whose
// root holds cgroup own: the mount's root, and own's directory under root.
func mountOf(root, own string) (mountRoot, dir string, err error) {
	file := filepath.Join(root, "proc/self/mountinfo")
	b, err := os.ReadFile(file)
	if err != nil {
		return "", "", &NoDelegation{err.Error()}
	}
	for line := range strings.Lines(string(b)) {
		pre, post, ok := strings.Cut(strings.TrimRight(line, "\n"), " - ")
		f, fs := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(fs) < 1 || fs[0] != "cgroup2" {
			continue
		}
		mroot, point := unescape(f[3]), unescape(f[4])
		rel, ok := under(own, mroot)
		if ok {
			return mroot, filepath.Join(root, point, rel), nil
		}
	}
	return "", "", &NoDelegation{fmt.Sprintf("%s: no cgroup2 mount holds this process's cgroup %s", file, own)}
}

// under is p relative to dir when p is dir or below it (a path prefix
// ending at a separator).
func under(p, dir string) (string, bool) {
	if p == dir {
		return ".", true
	}
	if dir == "/" {
		return strings.TrimPrefix(p, "/"), true
	}
	rest, ok := strings.CutPrefix(p, dir+"/")
	return rest, ok
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// qualifies checks the cgroup at dir (the hierarchy's root when isRoot):
// the delegation it is, or why it is none.
func qualifies(h Host, dir string, isRoot bool) (Delegation, string) {
	avail, err := fields(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return Delegation{}, err.Error()
	}
	on, err := fields(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		return Delegation{}, err.Error()
	}
	var enable []string
	for _, c := range Required {
		switch {
		case slices.Contains(on, c):
		case !slices.Contains(avail, c):
			return Delegation{}, fmt.Sprintf("%s: the %s controller is not available (cgroup.controllers)", dir, c)
		default:
			enable = append(enable, c)
		}
	}
	if len(enable) > 0 {
		if why := enableable(h, dir, isRoot, enable); why != "" {
			return Delegation{}, why
		}
	}
	for _, p := range []string{dir, filepath.Join(dir, "cgroup.procs")} {
		if !h.Writable(p) {
			return Delegation{}, fmt.Sprintf("%s: not writable by this process", p)
		}
	}
	return Delegation{Dir: dir, Enable: enable}, ""
}

// enableable says why controllers cannot be enabled in dir's
// cgroup.subtree_control, "" when they can.
func enableable(h Host, dir string, isRoot bool, controllers []string) string {
	what := strings.Join(controllers, " and ")
	if !isRoot {
		procs, err := fields(filepath.Join(dir, "cgroup.procs"))
		if err != nil {
			return err.Error()
		}
		if len(procs) > 0 {
			return fmt.Sprintf("%s: %s not enabled for its children, and it holds processes (cgroup v2 enables controllers only in a cgroup without any)", dir, what)
		}
	}
	if f := filepath.Join(dir, "cgroup.subtree_control"); !h.Writable(f) {
		return fmt.Sprintf("%s: %s not enabled, and not writable by this process", f, what)
	}
	return ""
}

// fields are the words of file.
func fields(file string) ([]string, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: does not exist", file)
	}
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(b)), nil
}

// Delegated is this host's delegation to this process ([Detect] over "/"),
// its controllers enabled ([Delegation.Prepare]), found once per process:
// a *NoDelegation when there is none (the caller takes resource limits);
// any other error when one was found that cannot be prepared (the caller
// refuses what it would have bounded there).
var Delegated = sync.OnceValues(func() (Delegation, error) {
	d, err := Detect(Host{Root: "/"})
	if err == nil {
		err = d.Prepare()
	}
	return d, err
})
