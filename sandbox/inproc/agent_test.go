package inproc

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/internal/llsys"
	"github.com/dshsim/dshsim/sandbox/procfs"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

// agentEnv makes the test binary an agent (agentMain) instead of running
// tests: a process that confines the attacker (testdata/attacker) with a
// launcher and reports what the attacker did to it.
const agentEnv = "DSHSIM_INPROC_AGENT"

// agentConfig is what an agent run does, passed as JSON in agentEnv.
type agentConfig struct {
	Mode      sandbox.Mode
	Workspace string
	Attacker  string
	// NoNest and Dumpable take the launcher's two protections away.
	NoNest, Dumpable bool
	// Kill makes the attacker end with SIGKILL to every thread it may signal.
	Kill bool
	// Command, when set, is run instead of the attacker.
	Command []string
	// Slack, when positive, first sets this process's RLIMIT_NPROC to the
	// tasks its user runs now plus Slack.
	Slack int
}

// canaryText is the agent's canary before any attack; patchText what the
// memory attacks write over it.
const canaryText, patchText = "canary-untouched", "PATCHED-BY-ATTACK"

// agentMain runs one agent: a launcher with cfg's protections, a canary on
// the heap, and the attacker started confined by cfg's policy, its output
// on this process's stdout; then the canary as the agent sees it.
func agentMain(raw string) int {
	var cfg agentConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Println("agent: config:", err)
		return 2
	}
	if cfg.Slack > 0 {
		n, err := procfs.Proc.UserTasks(os.Getuid())
		if err == nil {
			err = llsys.Prlimit(0, llsys.RlimitNproc, uint64(n+cfg.Slack), uint64(n+cfg.Slack))
		}
		if err != nil {
			fmt.Println("agent: limit:", err)
			return 2
		}
	}
	l, err := newLauncher(Options{}, knobs{noNest: cfg.NoNest, dumpable: cfg.Dumpable})
	if err != nil {
		fmt.Println("agent:", err)
		return 2
	}
	canary := []byte(canaryText)
	argv := []string{cfg.Attacker, fmt.Sprint(os.Getpid()), fmt.Sprintf("%x", uintptr(unsafe.Pointer(&canary[0]))), fmt.Sprint(len(canary)), patchText}
	if cfg.Kill {
		argv = append(argv, "kill")
	}
	if cfg.Command != nil {
		argv = cfg.Command
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stdout
	if err := l.Start(cmd, sandbox.Policy{Mode: cfg.Mode, WorkspaceRoot: cfg.Workspace}); err != nil {
		fmt.Println("agent: start:", err)
		fmt.Println("agent: alive")
		return 0
	}
	if err := cmd.Wait(); err != nil {
		fmt.Println("agent: the command:", err)
	}
	fmt.Printf("agent canary: %s\n", canary)
	runtime.KeepAlive(canary)
	return 0
}

// agentRun is what one agent run showed.
type agentRun struct {
	got    map[string]bool // attack names that got through on some thread
	lines  []string
	canary string
	killed bool
	output string
}

// attackerBinary builds testdata/attacker into a directory every user may
// read, with a copy of this test binary (the agent) beside it.
func attackerBinary(t *testing.T) (attacker, agent string) {
	t.Helper()
	dir := sandboxtest.TempDir(t, "dshsim-attack-")
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	attacker, err := sandboxtest.Build("", dir, "attacker", "./testdata/attacker")
	if err != nil {
		t.Fatal(err)
	}
	agent = filepath.Join(dir, "agent.test")
	self, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	defer self.Close()
	out, err := os.OpenFile(agent, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, self); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return attacker, agent
}

// runAgent runs the agent as uid (-1: this process's) and parses its report.
func runAgent(t *testing.T, agent string, uid int, cfg agentConfig) agentRun {
	t.Helper()
	raw, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(agent)
	cmd.Env = append(os.Environ(), agentEnv+"="+string(raw))
	if uid >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	out, err := cmd.Output()
	r := agentRun{got: map[string]bool{}, output: string(out)}
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			r.killed = true
		} else {
			t.Fatalf("agent %+v: %v\n%s", cfg, err, out)
		}
	} else if err != nil {
		t.Fatalf("agent %+v: %v\n%s", cfg, err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if c, ok := strings.CutPrefix(line, "agent canary: "); ok {
			r.canary = c
			continue
		}
		if name, rest, ok := strings.Cut(line, " "); ok && strings.HasSuffix(rest, ": GOT") {
			r.got[name] = true
		}
		if line != "" {
			r.lines = append(r.lines, line)
		}
	}
	return r
}

// memoryAttacks are the attacks on the agent's memory and descriptors,
// which either protection stops: the nested layer (Landlock keeps a domain
// from tracing an ancestor's) and the agent not being dumpable (only a
// holder of CAP_SYS_PTRACE may then trace it, and a confined command holds
// no capability).
var memoryAttacks = []string{"ptrace-attach", "ptrace-seize", "vm-read", "vm-write", "proc-mem", "task-fd"}

// alwaysBlocked are attacks the file policy stops before either protection
// matters: writing /proc/<pid>/mem (every mode grants /proc read-only).
var alwaysBlocked = []string{"proc-mem-write"}

// signalAttacks are the attacks only the nested layer's signal scope stops
// (a process of the same user may signal another otherwise).
var signalAttacks = []string{"tgkill", "kill"}

// TestACommandCannotReachTheAgent: a confined command (the attacker) tries
// every way to reach the agent that started it: PTRACE_ATTACH and
// PTRACE_SEIZE of every thread, process_vm_readv and process_vm_writev of a
// canary, reading (and writing) it through /proc/<pid>/mem and every
// thread's /proc/<pid>/task/<tid>/mem, opening every thread's descriptors for
// writing, and signalling every thread (tgkill) and the process (kill), then
// SIGKILL to every thread it may signal. Read-only and workspace-write, as
// this user and (as root) as uid 65534. With both protections nothing gets
// through and the agent lives on with its canary intact. Each protection is
// then taken away in turn: without the nested layer the signals get through
// (the agent is killed) while not being dumpable still stops the rest;
// with the agent dumpable the nested layer still stops everything; without
// both every attack gets through, on the restricted thread that shares the
// command's domain.
func TestACommandCannotReachTheAgent(t *testing.T) {
	sandboxtest.RequireLandlock(t, 6)
	attacker, agent := attackerBinary(t)
	users := []int{-1}
	if os.Geteuid() == 0 {
		users = append(users, 65534)
	}
	for _, uid := range users {
		ws := sandboxtest.TempDir(t, "dshsim-attack-ws-")
		if uid >= 0 {
			if err := os.Chown(ws, uid, uid); err != nil {
				t.Fatal(err)
			}
		}
		for _, mode := range []sandbox.Mode{sandbox.ReadOnly, sandbox.WorkspaceWrite} {
			for _, tc := range []struct {
				name             string
				noNest, dumpable bool
				want             []string // the attacks that must get through; every other must not
			}{
				{name: "both protections", want: nil},
				{name: "dumpable", dumpable: true, want: nil},
				{name: "no nested layer", noNest: true, want: signalAttacks},
				{name: "neither", noNest: true, dumpable: true, want: append(append([]string(nil), memoryAttacks...), signalAttacks...)},
			} {
				t.Run(fmt.Sprintf("uid=%d/%s/%s", uid, mode, tc.name), func(t *testing.T) {
					cfg := agentConfig{Mode: mode, Workspace: ws, Attacker: attacker, NoNest: tc.noNest, Dumpable: tc.dumpable}
					r := runAgent(t, agent, uid, cfg)
					if r.killed {
						t.Fatalf("the agent was killed without the attacker's SIGKILL:\n%s", r.output)
					}
					for _, a := range append(append(append([]string(nil), memoryAttacks...), signalAttacks...), alwaysBlocked...) {
						if want := slicesContains(tc.want, a); r.got[a] != want {
							t.Errorf("%s got through: %v, want %v", a, r.got[a], want)
						}
					}
					patched := slicesContains(tc.want, "vm-write")
					if (r.canary != canaryText) != patched || r.canary == "" {
						t.Errorf("the agent's canary reads %q after the attacks; patched expected: %v", r.canary, patched)
					}
					if t.Failed() {
						t.Logf("the agent's output:\n%s", r.output)
					}
					cfg.Kill = true
					r = runAgent(t, agent, uid, cfg)
					if want := slicesContains(tc.want, "tgkill"); r.killed != want {
						t.Errorf("the attacker's SIGKILL killed the agent: %v, want %v\n%s", r.killed, want, r.output)
					}
				})
			}
		}
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestNoRoomForAThreadFailsTheCallClosed: an agent whose user runs almost
// as many tasks as its RLIMIT_NPROC allows (four slots free, fewer than
// threadReserve) gets a clear error for a call that needs a new restricted
// thread, runs nothing, and lives on. Without the check the thread is made
// (the call runs), or the Go runtime, failing to make one, aborts the
// whole agent. The agent runs as a user id of its own (roomUID), whose
// task count no other test moves meanwhile.
func TestNoRoomForAThreadFailsTheCallClosed(t *testing.T) {
	sandboxtest.RequireLandlock(t, 1)
	if os.Geteuid() != 0 {
		t.Skip("needs root (CAP_SETUID) to run the agent as a user id no other test runs processes as")
	}
	uid := roomUID
	_, agent := attackerBinary(t)
	ws := sandboxtest.TempDir(t, "dshsim-room-ws-")
	os.Chmod(ws, 0o777)
	r := runAgent(t, agent, uid, agentConfig{Mode: sandbox.ReadOnly, Workspace: ws, Command: []string{"sh", "-c", "echo the command ran"}, Slack: 4})
	if !strings.Contains(r.output, "agent: start: ") || !strings.Contains(r.output, "no room for a restricted thread") ||
		!strings.Contains(r.output, "RLIMIT_NPROC") || !strings.Contains(r.output, "agent: alive") || strings.Contains(r.output, "the command ran") {
		t.Errorf("an agent near its process limit: want a refusal naming RLIMIT_NPROC, nothing run, the agent alive; got:\n%s", r.output)
	}
}

// TestCommandsKeepTheAgentsReserve: a command started by an agent bound by
// RLIMIT_NPROC gets threadReserve less, soft and hard (so it cannot raise
// it back), and cannot fork past it; root's commands keep root's (root is
// not bound by it).
func TestCommandsKeepTheAgentsReserve(t *testing.T) {
	sandboxtest.RequireLandlock(t, 1)
	_, agent := attackerBinary(t)
	ws := sandboxtest.TempDir(t, "dshsim-room-ws-")
	os.Chmod(ws, 0o777)
	users := []int{-1}
	if os.Geteuid() == 0 {
		users = append(users, 65534)
	}
	script := "grep 'Max processes' /proc/self/limits"
	for _, uid := range users {
		r := runAgent(t, agent, uid, agentConfig{Mode: sandbox.ReadOnly, Workspace: ws, Command: []string{"sh", "-c", script}})
		soft, hard, err := llsys.Getrlimit(llsys.RlimitNproc)
		if err != nil {
			t.Fatal(err)
		}
		id := os.Getuid()
		if uid >= 0 {
			id = uid
		}
		want := childLimit(id, soft)
		wantLine := fmt.Sprintf("%d %d processes", want, want)
		if want == 0 {
			wantLine = fmt.Sprintf("%s %s processes", limitText(soft), limitText(hard))
		}
		if got := strings.Join(strings.Fields(strings.TrimPrefix(r.lines[0], "Max processes")), " "); got != wantLine {
			t.Errorf("uid %d: the command's RLIMIT_NPROC reads %q, want %q (this process's soft limit %d, %d kept)\n%s", id, got, wantLine, soft, threadReserve, r.output)
		}
	}
}

// roomUID is the user id TestNoRoomForAThreadFailsTheCallClosed runs its
// agent as: one no other test uses (root is not bound by RLIMIT_NPROC).
const roomUID = 65533

// limitText is a limit as /proc/<pid>/limits shows it.
func limitText(v uint64) string {
	if v == rlimInfinity {
		return "unlimited"
	}
	return fmt.Sprint(v)
}
