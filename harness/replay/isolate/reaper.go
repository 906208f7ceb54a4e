//go:build linux

package isolate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/sandbox/procfs"
)

// runtimeLines is how many of the Go runtime's own lines of the run
// stage's stderr PID 1 keeps (to name the bound a fatal error says it hit).
const runtimeLines = 4

// drainWait is how long PID 1 waits, once the run stage ended, for the
// last of its response and stderr.
const drainWait = 2 * time.Second

// runAttr starts the run stage in a user and mount namespace of its own:
// the mounts contain made are copied into it locked (a namespace owned by
// a less privileged user namespace cannot remount, unmount or reveal what
// it was given), so nothing of the run can undo them. It maps one uid and
// one gid, each to itself (runIDs: the caller's, or nobody's for root): no
// capability of the namespace applies to a host file of any other owner,
// and root's supplementary groups are dropped (an unprivileged caller's
// cannot be: setgroups is denied in its namespaces). CAP_SETPCAP, ambient,
// is the one capability it starts with, to empty its bounding set.
func runAttr(cfg config) *syscall.SysProcAttr {
	uid, gid := cfg.runIDs()
	root := cfg.UID == 0
	return &syscall.SysProcAttr{
		Cloneflags:                 unix.CLONE_NEWUSER | unix.CLONE_NEWNS,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		GidMappingsEnableSetgroups: root,
		Credential:                 &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}, NoSetGroups: !root},
		AmbientCaps:                []uintptr{unix.CAP_SETPCAP},
		Pdeathsig:                  syscall.SIGKILL,
	}
}

// runInit starts the run stage and stays PID 1 of the namespace until it
// ends, then answers the host on descriptor 3 and returns the run stage's
// exit status; an error means the run stage did not start. This process is
// undumpable and drops every capability once the run stage runs; it
// forwards SIGTERM and SIGINT, kills the run stage if anything stops it,
// and reaps every orphan the run stage leaves. The run stage answers PID 1,
// not the host: PID 1 passes its answer on only when it ran to its end (a
// run stage killed, stopped or past a bound is an error naming what
// happened, never what it may have written before).
func runInit(name string, cfg config, seen Containment) (int, error) {
	respR, respW, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("isolate: clear the ambient capabilities: %w", err)
	}
	files := []uintptr{0, errW.Fd(), errW.Fd(), respW.Fd()}
	if cfg.Conn {
		files = append(files, connFD)
	}
	env := setEnv(os.Environ(), envStage, stageRun+":"+name)
	pid, err := syscall.ForkExec(exe, os.Args, &syscall.ProcAttr{Env: env, Files: files, Sys: runAttr(cfg)})
	respW.Close()
	errW.Close()
	if cfg.Conn {
		unix.Close(connFD)
	}
	if err != nil {
		return 0, fmt.Errorf("isolate: start the run stage in a user namespace of its own: %w", err)
	}
	// Only now: a child that is not dumpable until its exec has /proc files
	// its parent cannot open, and the parent writes its uid_map there.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "isolate: make PID 1 undumpable: %v; the run stage is killed\n", err)
		_ = unix.Kill(pid, unix.SIGKILL)
	} else if err := dropCapabilities(); err != nil {
		fmt.Fprintf(os.Stderr, "isolate: drop PID 1's capabilities: %v; the run stage is killed\n", err)
		_ = unix.Kill(pid, unix.SIGKILL)
	}
	resp := make(chan []byte, 1)
	go func() {
		data, _ := io.ReadAll(io.LimitReader(respR, maxResponse+1))
		resp <- data
	}()
	tail := make(chan string, 1)
	go func() { tail <- tee(os.Stderr, errR) }()
	stop := make(chan struct{})
	data := make(chan int64, 1)
	go func() { data <- watchData(pid, stop) }()
	e := reap(pid)
	close(stop)
	e.Data = <-data
	e.Tail = waitFor(tail, drainWait, "")
	answer(cfg, seen, e, waitFor(resp, drainWait, nil))
	if e.Exited {
		return e.Code, nil
	}
	return 128 + int(e.Signal), nil
}

// dataEvery is how often PID 1 samples the run stage's VmData.
const dataEvery = 20 * time.Millisecond

// watchData samples pid's VmData until stop is closed and returns the
// most it saw, in bytes.
func watchData(pid int, stop <-chan struct{}) int64 {
	var most int64
	tick := time.NewTicker(dataEvery)
	defer tick.Stop()
	for {
		if status, err := procfs.Proc.Status(strconv.Itoa(pid)); err == nil {
			f := strings.Fields(procfs.ParseStatus(status)["VmData"])
			if len(f) == 2 && f[1] == "kB" {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					most = max(most, kb<<10)
				}
			}
		}
		select {
		case <-stop:
			return most
		case <-tick.C:
		}
	}
}

// waitFor is what ch gives within d, or none.
func waitFor[T any](ch <-chan T, d time.Duration, none T) T {
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		return none
	}
}

// tee copies r to w and returns the first runtimeLines lines of it that
// the Go runtime writes when it dies (isRuntimeLine), joined.
func tee(w io.Writer, r io.Reader) string {
	var kept []string
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			_, _ = w.Write(line)
			if len(kept) < runtimeLines && isRuntimeLine(line) {
				kept = append(kept, strings.TrimSpace(string(line)))
			}
		}
		if err != nil && err != bufio.ErrBufferFull {
			return strings.Join(kept, "\n")
		}
	}
}

// isRuntimeLine reports whether line is one the Go runtime writes as it
// dies: "fatal error: ...", "runtime: ..." or "runtime/cgo: ...".
func isRuntimeLine(line []byte) bool {
	for _, p := range []string{"fatal error: ", "runtime: ", "runtime/cgo: "} {
		if bytes.HasPrefix(line, []byte(p)) {
			return true
		}
	}
	return false
}

// answer writes PID 1's envelope to the host: the run stage's, with what
// the child could see, when the run stage ran to its end (exit status 0,
// never stopped) and its envelope is whole; its error in any case; else an
// error saying how the run stage ended, naming the bound it hit.
func answer(cfg config, seen Containment, e ending, data []byte) {
	var env envelope
	whole := len(data) > 0 && len(data) <= maxResponse && json.Unmarshal(data, &env) == nil
	switch {
	case whole && env.Error != "":
		env.Response = nil
	case whole && e.Exited && e.Code == 0 && e.Stopped == 0:
	default:
		env = envelope{Error: "isolate: the run stage " + e.describe(cfg.Bounds) + " before it answered"}
		if whole {
			env.Error = "isolate: the run stage " + e.describe(cfg.Bounds) + " after it answered: its answer is not taken"
		}
	}
	env.Seen = &seen
	f := os.NewFile(responseFD, "isolate-response")
	_ = json.NewEncoder(f).Encode(env)
	_ = f.Close()
}

// dropCapabilities clears the ambient set and the inheritable, permitted and
// effective sets of the calling thread.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear the ambient set: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	return unix.Capset(&hdr, &data[0])
}

// reap forwards SIGTERM and SIGINT to pid and waits for every child until
// pid ends; a stop of pid (SIGSTOP, SIGTSTP: nothing but what the run
// started sends one, and a stopped run stage would hang the host) is
// answered with SIGKILL. It returns how pid ended.
func reap(pid int) ending {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT)
	go func() {
		for s := range sigs {
			_ = unix.Kill(pid, s.(syscall.Signal))
		}
	}()
	var e ending
	for {
		var ws unix.WaitStatus
		var ru unix.Rusage
		got, err := unix.Wait4(-1, &ws, unix.WUNTRACED, &ru)
		switch {
		case err == unix.EINTR || (err == nil && got != pid):
			continue
		case err != nil:
			fmt.Fprintf(os.Stderr, "isolate: wait for the run stage: %v\n", err)
			return ending{Exited: true, Code: 3}
		case ws.Stopped():
			if e.Stopped == 0 {
				e.Stopped = ws.StopSignal()
			}
			_ = unix.Kill(pid, unix.SIGKILL)
			continue
		}
		e.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		if ws.Signaled() {
			e.Signal = ws.Signal()
		} else {
			e.Exited, e.Code = true, ws.ExitStatus()
		}
		return e
	}
}
