package landlock

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/dshsim/dshsim/sandbox/internal/llsys"
)

// Fatal is a runner-level failure. The runner prints [Prefix] + Msg as its one
// stderr line and exits [ExitFailure]; the wrapped command never ran.
type Fatal struct{ Msg string }

// Error returns the message without the "landlock-run: " prefix.
func (e *Fatal) Error() string { return e.Msg }

// NotEnforcedMsg is the VERBATIM fatal message for a kernel without Landlock.
const NotEnforcedMsg = "landlock is not enforced by this kernel (ABI unsupported or disabled)"

// KernelABI returns the kernel's Landlock ABI, or a [*Fatal] with
// [NotEnforcedMsg] when the kernel has none (ENOSYS, or disabled at boot).
func KernelABI() (int, error) {
	abi, err := llsys.ABIVersion()
	if err != nil || abi < 1 {
		return 0, &Fatal{NotEnforcedMsg}
	}
	return abi, nil
}

// Ruleset is an open Landlock ruleset fd built for one ABI.
type Ruleset struct {
	// FD is the ruleset file descriptor (close with [Ruleset.Close]).
	FD int
	// ABI is the ABI whose rights it handles.
	ABI int
}

// FileID names a file by device and inode number, as fstat reports them.
type FileID struct{ Dev, Ino uint64 }

// String renders the id as the runner's --rw-inode operand: "<dev>:<ino>".
func (id FileID) String() string {
	return strconv.FormatUint(id.Dev, 10) + ":" + strconv.FormatUint(id.Ino, 10)
}

// ParseFileID parses "<dev>:<ino>" (two decimal numbers).
func ParseFileID(s string) (FileID, error) {
	d, i, ok := strings.Cut(s, ":")
	dev, err1 := strconv.ParseUint(d, 10, 64)
	ino, err2 := strconv.ParseUint(i, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		return FileID{}, fmt.Errorf("want <device>:<inode> (two decimal numbers), got %q", s)
	}
	return FileID{Dev: dev, Ino: ino}, nil
}

// Rules are the grants of one ruleset.
type Rules struct {
	// RO and RW are the rule paths, read and execute beneath each RO path,
	// [ReadWriteRights] beneath each RW path; installed RO first, then RW,
	// each in order.
	RO, RW []string
	// Inodes pins rule paths to the file a caller checked: a path listed
	// here must open as exactly that device and inode, or the ruleset is
	// refused. The runner's --rw-inode fills it with what sandbox.Validate
	// saw, so a workspace swapped between the check and the open is never
	// granted.
	Inodes map[string]FileID
	// Scoped scopes the domain ([ScopeSignal], [ScopeAbstractUnixSocket];
	// the kernel needs ABI 6 for any); 0 for none.
	Scoped uint64
}

// NewRuleset builds a ruleset handling every right of abi for r. Every rule
// path is opened without following a symlink at any component (openat2 with
// RESOLVE_NO_SYMLINKS): a path that is, or passes through, a link fails
// closed, as does a path that cannot be opened ("cannot open rule path:
// <path>: <why>") and a pinned path that opens as another file ("rule path
// changed since it was checked: ..."), rather than narrowing or redirecting
// the grant. A rule path that is not a directory gets only the
// file-compatible rights.
func NewRuleset(abi int, r Rules) (*Ruleset, error) {
	handled := Handled(abi)
	fd, err := llsys.CreateRuleset(handled, r.Scoped)
	if err != nil {
		return nil, rulesetError(err)
	}
	rs := &Ruleset{FD: fd, ABI: abi}
	add := func(path string, rights uint64) error {
		pfd, id, isDir, err := llsys.OpenPath(path)
		if err != nil {
			return ruleOpenError(path, err)
		}
		defer llsys.Close(pfd)
		if want, ok := r.Inodes[path]; ok && (FileID{id.Dev, id.Ino}) != want {
			return &Fatal{"rule path changed since it was checked: " + path + " is now the file " + FileID{id.Dev, id.Ino}.String() + ", not " + want.String() + "; refusing to grant it"}
		}
		if !isDir {
			rights = ForFile(rights)
		}
		if err := llsys.AddPathBeneath(fd, pfd, rights); err != nil {
			return rulesetError(err)
		}
		return nil
	}
	for _, p := range r.RO {
		if err := add(p, ReadOnlyRights(handled)); err != nil {
			rs.Close()
			return nil, err
		}
	}
	for _, p := range r.RW {
		if err := add(p, ReadWriteRights(handled)); err != nil {
			rs.Close()
			return nil, err
		}
	}
	return rs, nil
}

// ruleOpenError is the fatal error of a rule path that cannot be opened
// without following links: ELOOP says a component is a symlink, ENOSYS that
// the kernel offers no openat2 (the runner has no fallback that follows
// links); anything else is its strerror.
func ruleOpenError(path string, err error) *Fatal {
	why := Strerror(err)
	switch {
	case errors.Is(err, syscall.ELOOP):
		why = "a component is a symbolic link (rule paths are opened without following links)"
	case errors.Is(err, syscall.ENOSYS):
		why = "openat2 is not available (" + why + "), and rule paths are opened only without following links"
	}
	return &Fatal{"cannot open rule path: " + path + ": " + why}
}

// Close closes the ruleset fd.
func (r *Ruleset) Close() error {
	if r == nil || r.FD < 0 {
		return nil
	}
	err := llsys.Close(r.FD)
	r.FD = -1
	return err
}

func rulesetError(err error) error {
	return &Fatal{"landlock ruleset error: " + Strerror(err)}
}

// OnRestrictedThread runs fn on a fresh OS thread restricted by rulesetFD
// (capabilities dropped, no_new_privs, then landlock_restrict_self without
// TSYNC) and lets that
// thread die afterwards: the goroutine exits while still locked, so the Go
// runtime terminates the thread instead of returning it to the scheduler.
// Threads the runtime creates meanwhile are cloned from its template thread,
// not from the restricted one, so no other thread of the process is confined.
// fn runs only if the restriction succeeded; a restriction failure is a
// [*Fatal] "landlock ruleset error: <strerror>". fn may be nil.
func OnRestrictedThread(rulesetFD int, fn func() error) error {
	done := make(chan error, 1)
	GoOffMainThread(func() {
		// Deliberately no UnlockOSThread: this thread must never run other goroutines.
		if err := restrict(rulesetFD); err != nil {
			done <- err
			return
		}
		if fn == nil {
			done <- nil
			return
		}
		done <- fn()
	})
	return <-done
}

// GoOffMainThread runs fn in a new goroutine locked to an OS thread that is
// not the process's main thread, and never unlocks it: when fn returns, the
// runtime ends the thread. The main thread cannot exit (the runtime would
// park it for good), so it must never be the one restricted. When the new
// goroutine lands on the main thread, it keeps the main thread locked while
// a second goroutine takes the job: that one cannot be scheduled on the
// locked main thread, so the runtime gives it another thread, and the main
// thread is unlocked only after the job's thread is locked. (Retrying with a
// fresh goroutine instead can land on the main thread forever when only one
// CPU runs the process: with GOMAXPROCS=1 --probe used to hang.)
func GoOffMainThread(fn func()) {
	go func() {
		runtime.LockOSThread()
		if llsys.Gettid() != syscall.Getpid() {
			fn()
			return // still locked: the thread ends here
		}
		locked := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			if llsys.Gettid() == syscall.Getpid() {
				panic("landlock: BUG: a goroutine ran on the main thread while another goroutine held it locked")
			}
			close(locked)
			fn()
		}()
		<-locked
		runtime.UnlockOSThread()
	}()
}

// RestrictThisThread locks the calling goroutine to its OS thread for good
// and restricts that thread (capabilities dropped, no_new_privs, then
// landlock_restrict_self without TSYNC). Only for a process that will exec
// or exit next: the goroutine keeps running confined.
func RestrictThisThread(rulesetFD int) error {
	runtime.LockOSThread()
	return restrict(rulesetFD)
}

// notStartupThreadMsg is the fatal message of [InitMain] called off the
// startup thread (a programming error in the caller, never the runner's).
const notStartupThreadMsg = "internal error: InitMain must run in an init function of package main (on the startup thread)"

// restrictStartupThread restricts the calling thread, which must be the
// startup thread (thread id = process id) with the calling goroutine locked
// to it, as the runtime keeps it during package initialisation. It takes no
// lock of its own (see [InitMain]).
func restrictStartupThread(rulesetFD int) error {
	if llsys.Gettid() != syscall.Getpid() {
		return &Fatal{notStartupThreadMsg}
	}
	return restrict(rulesetFD)
}

// restrict is the one sequence that confines the calling locked thread:
// every capability dropped ([DropCapabilities]), no_new_privs, then
// landlock_restrict_self without TSYNC. A failure is a [*Fatal].
func restrict(rulesetFD int) error {
	if err := DropCapabilities(); err != nil {
		return &Fatal{"cannot drop capabilities: " + err.Error()}
	}
	if err := llsys.SetNoNewPrivs(); err != nil {
		return rulesetError(err)
	}
	if err := llsys.RestrictSelf(rulesetFD); err != nil {
		return rulesetError(err)
	}
	return nil
}

// Strerror renders an errno the way C's strerror does (capitalised), so the
// runner's lines read like upstream's ("No such file or directory").
func Strerror(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		err = errno
	}
	s := err.Error()
	if s != "" && s[0] >= 'a' && s[0] <= 'z' {
		s = string(s[0]-'a'+'A') + s[1:]
	}
	return s
}
