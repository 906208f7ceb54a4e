//go:build linux

package isolate

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// nobody is the host uid and gid root's run stage runs as (see runMaps).
const nobody = 65534

// maxID is the highest id a user namespace can map, plus one (-1 is never valid).
const maxID = 1<<32 - 1

// runMaps are the uid (and gid) maps of the run stage's user namespace.
//
// Anyone but root keeps its own id and only that. Root's run stage is root
// of its namespace, but that root is the host's nobody and the host's root
// is nobody there (every other id maps to itself): a process whose host uid
// is 0 passes the uid checks of procfs whatever namespace it is in (it
// could write the kernel's sysctls through the child's /proc, or
// /proc/sysrq-trigger), whereas this root's capabilities, which still let
// it read what host root reads (every host id is mapped), reach nothing of
// the host's but files on read-only mounts.
func runMaps(id int) []syscall.SysProcIDMap {
	if id != 0 {
		return []syscall.SysProcIDMap{{ContainerID: id, HostID: id, Size: 1}}
	}
	return []syscall.SysProcIDMap{
		{ContainerID: 0, HostID: nobody, Size: 1},
		{ContainerID: 1, HostID: 1, Size: nobody - 1},
		{ContainerID: nobody, HostID: 0, Size: 1},
		{ContainerID: nobody + 1, HostID: nobody + 1, Size: maxID - (nobody + 1)},
	}
}

// runInit starts the run stage and stays PID 1 of the namespace until it
// ends, then returns its exit status; an error means the run stage did not
// start. The run stage gets a user and mount namespace of its own: the
// mounts contain made are copied into it locked (a namespace owned by a
// less privileged user namespace cannot remount, unmount or reveal what it
// was given), so even a process that is root of that namespace cannot undo
// them. This process is undumpable (a process of the run stage with its uid
// must not ptrace its way to its capabilities) and drops every capability
// once the run stage runs; it forwards SIGTERM and SIGINT and reaps every
// orphan the run stage leaves.
func runInit(name string) (int, error) {
	attr := &syscall.SysProcAttr{
		Cloneflags:                 unix.CLONE_NEWUSER | unix.CLONE_NEWNS,
		UidMappings:                runMaps(os.Getuid()),
		GidMappings:                runMaps(os.Getgid()),
		GidMappingsEnableSetgroups: os.Getgid() == 0,
		Pdeathsig:                  syscall.SIGKILL,
	}
	if os.Getuid() == 0 {
		// The host's root is nobody in the new namespace until it becomes
		// root there, which is the host's nobody.
		attr.Credential = &syscall.Credential{Uid: 0, Gid: 0}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("isolate: clear the ambient capabilities: %w", err)
	}
	env := setEnv(os.Environ(), envStage, stageRun+":"+name)
	pid, err := syscall.ForkExec(exe, os.Args, &syscall.ProcAttr{Env: env, Files: []uintptr{0, 1, 2, responseFD}, Sys: attr})
	if err != nil {
		return 0, fmt.Errorf("isolate: start the run stage in a user namespace of its own: %w", err)
	}
	unix.Close(responseFD) // the run stage answers; the parent sees EOF once both are gone
	// Only now: a child that is not dumpable until its exec has /proc files
	// its parent cannot open, and the parent writes its uid_map there.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "isolate: make PID 1 undumpable: %v; the run stage is killed\n", err)
		_ = unix.Kill(pid, unix.SIGKILL)
	} else if err := dropCapabilities(); err != nil {
		fmt.Fprintf(os.Stderr, "isolate: drop PID 1's capabilities: %v; the run stage is killed\n", err)
		_ = unix.Kill(pid, unix.SIGKILL)
	}
	return reap(pid), nil
}

// reap forwards SIGTERM and SIGINT to pid and waits for every child until
// pid ends: its exit status (128+signal when killed; 3 when it cannot be
// waited for).
func reap(pid int) int {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, unix.SIGTERM, unix.SIGINT)
	go func() {
		for s := range sigs {
			_ = unix.Kill(pid, s.(syscall.Signal))
		}
	}()
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, 0, nil)
		switch {
		case err == unix.EINTR || (err == nil && got != pid):
			continue
		case err != nil:
			fmt.Fprintf(os.Stderr, "isolate: wait for the run stage: %v\n", err)
			return 3
		case ws.Signaled():
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}
