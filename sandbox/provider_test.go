package sandbox

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type probeLog struct{ calls []string }

func (l *probeLog) probes(bwrap bool, landlock Enforcement) Probes {
	return Probes{
		Bwrap: func(context.Context) bool { l.calls = append(l.calls, "bwrap"); return bwrap },
		Landlock: func(_ context.Context, launcher string) (Enforcement, bool) {
			l.calls = append(l.calls, "landlock "+launcher)
			return landlock, landlock != ""
		},
		Seatbelt:   func(context.Context) bool { l.calls = append(l.calls, "seatbelt"); return true },
		WindowsACL: func(context.Context, []string) bool { l.calls = append(l.calls, "windows-acl"); return true },
	}
}

func ms(v float64) *float64 { return &v }

func newProvider(t *testing.T, cfg Config) *Provider {
	t.Helper()
	p, err := NewProvider(cfg)
	if err != nil {
		t.Fatalf("NewProvider: %v", err)
	}
	return p
}

func TestNewProviderRejectsBadConfig(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{name: "zero probe timeout", cfg: Config{ProbeTimeoutMs: ms(0)}, want: "sandbox-local: probeTimeoutMs must be a positive finite number"},
		{name: "negative probe timeout", cfg: Config{ProbeTimeoutMs: ms(-1)}, want: "sandbox-local: probeTimeoutMs must be a positive finite number"},
		{name: "infinite probe timeout", cfg: Config{ProbeTimeoutMs: ms(math.Inf(1))}, want: "sandbox-local: probeTimeoutMs must be a positive finite number"},
		{name: "NaN probe timeout", cfg: Config{ProbeTimeoutMs: ms(math.NaN())}, want: "sandbox-local: probeTimeoutMs must be a positive finite number"},
		{name: "signatures without runnerCommand", cfg: Config{RunnerFailureSignatures: []string{"r: "}}, want: "sandbox-local: runnerFailureSignatures requires runnerCommand"},
		{name: "runnerCommand without signatures", cfg: Config{RunnerCommand: []string{"/r"}}, want: "sandbox-local: runnerCommand requires at least one runnerFailureSignatures entry"},
		{name: "blank signature", cfg: Config{RunnerCommand: []string{"/r"}, RunnerFailureSignatures: []string{"  "}}, want: "sandbox-local: runnerFailureSignatures entries must be non-empty single-line strings"},
		{name: "newline in signature", cfg: Config{RunnerCommand: []string{"/r"}, RunnerFailureSignatures: []string{"a\nb"}}, want: "sandbox-local: runnerFailureSignatures entries must be non-empty single-line strings"},
		{name: "carriage return in signature", cfg: Config{RunnerCommand: []string{"/r"}, RunnerFailureSignatures: []string{"a\r"}}, want: "sandbox-local: runnerFailureSignatures entries must be non-empty single-line strings"},
		{name: "runner path that is a directory", cfg: Config{RunnerCommand: []string{dir}, RunnerFailureSignatures: []string{"r: "}}, want: `sandbox-local: runnerCommand "` + dir + `" is a directory, not an executable`},
		{name: "launcher path that is a directory", cfg: Config{LauncherPath: dir}, want: `sandbox-local: launcher path "` + dir + `" is a directory, not an executable`},
		{name: "relative launcher path", cfg: Config{LauncherPath: "bin/landlock-run"}, want: `sandbox-local: launcher path "bin/landlock-run" must be absolute`},
		{name: "rogue chain entry", cfg: Config{Chain: []string{"bwrap", "chroot"}}, want: `sandbox-local: unknown backend "chroot" in chain (want bwrap, landlock, seatbelt or windows-acl)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewProvider(tc.cfg)
			if err == nil || err.Error() != tc.want {
				t.Errorf("NewProvider error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestConfineRejectsBadInput(t *testing.T) {
	ws := t.TempDir()
	file := filepath.Join(ws, "f")
	os.WriteFile(file, nil, 0o644)
	log := &probeLog{}
	p := newProvider(t, Config{Platform: "linux", Probes: log.probes(true, Full)})
	tests := []struct {
		name   string
		argv   []string
		policy Policy
		want   string
	}{
		{name: "danger-full-access never reaches a provider", argv: []string{"true"}, policy: Policy{Mode: DangerFullAccess, WorkspaceRoot: ws},
			want: "sandbox: bad input: mode danger-full-access never reaches a provider; the consumer runs the command unconfined"},
		{name: "unknown mode", argv: []string{"true"}, policy: Policy{Mode: "all-access", WorkspaceRoot: ws},
			want: `sandbox: bad input: unknown sandbox mode "all-access" (want one of read-only, workspace-write, danger-full-access)`},
		{name: "empty argv", argv: nil, policy: Policy{Mode: ReadOnly, WorkspaceRoot: ws}, want: "sandbox: bad input: confine needs a command: argv is empty"},
		{name: "relative workspace root", argv: []string{"true"}, policy: Policy{Mode: ReadOnly, WorkspaceRoot: "proj"},
			want: `sandbox: bad input: workspace root "proj" is not an absolute path`},
		{name: "missing workspace root", argv: []string{"true"}, policy: Policy{Mode: WorkspaceWrite, WorkspaceRoot: ws + "/missing"},
			want: `sandbox: bad input: workspace root "` + ws + `/missing" does not exist`},
		{name: "workspace root that is a file", argv: []string{"true"}, policy: Policy{Mode: WorkspaceWrite, WorkspaceRoot: file},
			want: `sandbox: bad input: workspace root "` + file + `" is not a directory`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.Confine(context.Background(), tc.argv, tc.policy)
			if err == nil || err.Error() != tc.want || !errors.Is(err, ErrBadInput) {
				t.Errorf("Confine error = %v, want %q wrapping ErrBadInput", err, tc.want)
			}
		})
	}
	if len(log.calls) != 0 {
		t.Errorf("bad input probed backends: %q", log.calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Confine(ctx, []string{"true"}, Policy{Mode: ReadOnly, WorkspaceRoot: ws}); !errors.Is(err, context.Canceled) {
		t.Errorf("pre-cancelled Confine = %v, want context.Canceled", err)
	}
}

func TestProviderChains(t *testing.T) {
	const (
		pidNS    = "signal: the command runs in its own PID namespace, where the harness does not exist"
		pidNSAgt = "agent: the command runs in its own PID namespace, where the harness does not exist"
		llAgent  = "agent: the command runs in a Landlock domain, which may not trace a process outside it"
		scrubbed = "secret-env: secret variables are removed from the command's environment (sandbox.ScrubSecrets)"
	)
	ws := t.TempDir()
	realWS, _ := filepath.EvalSymlinks(ws)
	argv := []string{"bash", "-c", "echo hi"}
	ro := Policy{Mode: ReadOnly, WorkspaceRoot: ws}
	tests := []struct {
		name      string
		cfg       func(*probeLog) Config
		want      ConfinedArgv
		wantErr   string
		wantCalls []string
	}{
		{name: "linux bwrap pass selects bwrap and never probes landlock",
			cfg: func(l *probeLog) Config {
				return Config{Platform: "linux", LauncherPath: "/l/landlock-run", Probes: l.probes(true, Full)}
			},
			want:      ConfinedArgv{Argv: Wrap([]string{"bwrap"}, BwrapArgs(ro), argv), Backend: "bwrap", Enforcement: Full, DenialSignatures: []string{"read-only file system"}, RunnerFailureRules: []RunnerFailureRule{{FatalSignatures: []string{"bwrap: "}}}, Isolated: []string{pidNS, pidNSAgt}},
			wantCalls: []string{"bwrap"}},
		{name: "linux bwrap fail falls to landlock with the launcher path",
			cfg: func(l *probeLog) Config {
				return Config{Platform: "linux", LauncherPath: "/l/landlock-run", Probes: l.probes(false, Partial)}
			},
			want: ConfinedArgv{Argv: []string{"/l/landlock-run", "--ro", "/", "--rw", "/dev/null", "--", "bash", "-c", "echo hi"}, Backend: "landlock", Enforcement: Partial,
				DenialSignatures: []string{"permission denied"}, RunnerFailureRules: []RunnerFailureRule{{AllowedExitCodes: []int{125}, FatalSignatures: []string{"landlock-run: "}, InformationalLines: []string{LandlockPartialNotice}}},
				Ungoverned: []string{"chmod: file mode changes are not a Landlock right", "chown: file owner changes are not a Landlock right", "utimes: file time changes are not a Landlock right", "setxattr: extended attribute changes are not a Landlock right", "chattr: inode flag changes (FS_IOC_SETFLAGS on a regular file) are not a Landlock right"},
				Isolated:   []string{llAgent}},
			wantCalls: []string{"bwrap", "landlock /l/landlock-run"}},
		{name: "hardened bwrap nests the runner with --scope and scrubs secrets",
			cfg: func(l *probeLog) Config {
				return Config{Platform: "linux", LauncherPath: "/l/landlock-run", Probes: l.probes(true, Full), Harden: true}
			},
			want: ConfinedArgv{Argv: Wrap([]string{"bwrap"}, append(BwrapArgs(ro), "--ro-bind", "/l/landlock-run", "/l/landlock-run", "--", "/l/landlock-run", "--scope", "--rw", "/"), argv),
				Backend: "bwrap", Enforcement: Full, DenialSignatures: []string{"read-only file system"},
				RunnerFailureRules: []RunnerFailureRule{{FatalSignatures: []string{"bwrap: "}}, {AllowedExitCodes: []int{125}, FatalSignatures: []string{"landlock-run: "}, InformationalLines: []string{LandlockPartialNotice}}},
				Isolated: []string{pidNS, pidNSAgt, "abstract-unix: landlock-run --scope inside bwrap (Landlock ABI 6)",
					"git-dir: the workspace's .git is bound read-only under workspace-write (bwrap --ro-bind-try)", scrubbed}, ScrubSecrets: true},
			wantCalls: []string{"bwrap"}},
		{name: "hardened landlock adds --scope and scrubs secrets",
			cfg: func(l *probeLog) Config {
				return Config{Platform: "linux", LauncherPath: "/l/landlock-run", Probes: l.probes(false, Full), Harden: true}
			},
			want: ConfinedArgv{Argv: []string{"/l/landlock-run", "--scope", "--ro", "/", "--rw", "/dev/null", "--", "bash", "-c", "echo hi"}, Backend: "landlock", Enforcement: Full,
				DenialSignatures: []string{"permission denied"}, RunnerFailureRules: []RunnerFailureRule{{AllowedExitCodes: []int{125}, FatalSignatures: []string{"landlock-run: "}, InformationalLines: []string{LandlockPartialNotice}}},
				Ungoverned: landlockUngoverned,
				Isolated:   []string{llAgent, "signal: Landlock scoping (ABI 6)", "abstract-unix: Landlock scoping (ABI 6)", scrubbed}, ScrubSecrets: true},
			wantCalls: []string{"bwrap", "landlock /l/landlock-run"}},
		{name: "linux with no usable backend is unavailable",
			cfg: func(l *probeLog) Config {
				return Config{Platform: "linux", LauncherPath: "/l/landlock-run", Probes: l.probes(false, "")}
			},
			wantErr:   (&UnavailableError{Mode: ReadOnly}).Error(),
			wantCalls: []string{"bwrap", "landlock /l/landlock-run"}},
		{name: "darwin sole candidate is selected unprobed",
			cfg: func(l *probeLog) Config {
				return Config{Platform: "darwin", TempDir: "/var/t", Probes: l.probes(false, "")}
			},
			want: ConfinedArgv{Argv: []string{"sandbox-exec", "-p", seatbeltReadOnlyProfile, "--", "bash", "-c", "echo hi"}, Backend: "seatbelt", Enforcement: Full,
				DenialSignatures: []string{"operation not permitted"}, RunnerFailureRules: []RunnerFailureRule{{FatalSignatures: []string{"sandbox-exec: "}}}}},
		{name: "unknown platform fails closed with zero probes",
			cfg:     func(l *probeLog) Config { return Config{Platform: "plan9", Probes: l.probes(true, Full)} },
			wantErr: (&UnavailableError{Mode: ReadOnly}).Error()},
		{name: "custom chain probes a seatbelt rung",
			cfg: func(l *probeLog) Config {
				return Config{Platform: "linux", Chain: []string{"bwrap", "seatbelt"}, Probes: l.probes(false, "")}
			},
			want: ConfinedArgv{Argv: []string{"sandbox-exec", "-p", seatbeltReadOnlyProfile, "--", "bash", "-c", "echo hi"}, Backend: "seatbelt", Enforcement: Full,
				DenialSignatures: []string{"operation not permitted"}, RunnerFailureRules: []RunnerFailureRule{{FatalSignatures: []string{"sandbox-exec: "}}}},
			wantCalls: []string{"bwrap", "seatbelt"}},
		{name: "windows sole candidate is partial with the ACL dialect",
			cfg: func(l *probeLog) Config {
				return Config{Platform: "windows", WindowsRunner: []string{"node", "runner.js"}, TempDir: `C:\T`, Probes: l.probes(false, "")}
			},
			want: ConfinedArgv{Argv: []string{"node", "runner.js", "--workspace", realWS, "--temp", `C:\T`, "--mode", "read-only", "--", "bash", "-c", "echo hi"}, Backend: "windows-acl", Enforcement: Partial,
				DenialSignatures: []string{"access is denied", "access to the path", "permission denied", "operation not permitted"}, RunnerFailureRules: []RunnerFailureRule{{AllowedExitCodes: []int{127}, FatalSignatures: []string{"windows-acl-run: "}}}}},
		{name: "windows with an empty runner fails closed",
			cfg:     func(l *probeLog) Config { return Config{Platform: "windows", Probes: l.probes(false, "")} },
			wantErr: (&UnavailableError{Mode: ReadOnly}).Error()},
		{name: "windows rung in a custom chain is probed",
			cfg: func(l *probeLog) Config {
				return Config{Platform: "linux", Chain: []string{"windows-acl", "bwrap"}, WindowsRunner: []string{"node", "runner.js"}, TempDir: `C:\T`, Probes: l.probes(true, "")}
			},
			want: ConfinedArgv{Argv: []string{"node", "runner.js", "--workspace", realWS, "--temp", `C:\T`, "--mode", "read-only", "--", "bash", "-c", "echo hi"}, Backend: "windows-acl", Enforcement: Partial,
				DenialSignatures: []string{"access is denied", "access to the path", "permission denied", "operation not permitted"}, RunnerFailureRules: []RunnerFailureRule{{AllowedExitCodes: []int{127}, FatalSignatures: []string{"windows-acl-run: "}}}},
			wantCalls: []string{"windows-acl"}},
		{name: "runnerCommand wraps bwrap args without probing",
			cfg: func(l *probeLog) Config {
				return Config{Platform: "linux", RunnerCommand: []string{"/opt/runner", "--x"}, RunnerFailureSignatures: []string{"runner: "}, Probes: l.probes(true, Full)}
			},
			want: ConfinedArgv{Argv: Wrap([]string{"/opt/runner", "--x"}, BwrapArgs(ro), argv), Backend: "runner-command", Enforcement: Full,
				DenialSignatures: []string{"read-only file system", "permission denied"}, RunnerFailureRules: []RunnerFailureRule{{FatalSignatures: []string{"runner: "}}}}},
		{name: "empty runnerCommand is unconfigured and the chain still gates",
			cfg: func(l *probeLog) Config {
				return Config{Platform: "linux", RunnerCommand: []string{}, Probes: l.probes(true, Full)}
			},
			want:      ConfinedArgv{Argv: Wrap([]string{"bwrap"}, BwrapArgs(ro), argv), Backend: "bwrap", Enforcement: Full, DenialSignatures: []string{"read-only file system"}, RunnerFailureRules: []RunnerFailureRule{{FatalSignatures: []string{"bwrap: "}}}, Isolated: []string{pidNS, pidNSAgt}},
			wantCalls: []string{"bwrap"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			log := &probeLog{}
			p := newProvider(t, tc.cfg(log))
			got, err := p.Confine(context.Background(), argv, Policy{Mode: ReadOnly, WorkspaceRoot: ws})
			if tc.wantErr != "" {
				var ue *UnavailableError
				if err == nil || err.Error() != tc.wantErr || !errors.As(err, &ue) || ue.Mode != ReadOnly {
					t.Fatalf("Confine error = %v, want UnavailableError %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatalf("Confine: %v", err)
			}
			if tc.wantErr == "" {
				// The workspace root in bwrap's argv is the canonical one.
				// The granted policy is the asked one with that canonical root.
				want := tc.want
				for i, a := range want.Argv {
					if a == ws {
						want.Argv[i] = realWS
					}
				}
				want.Policy = Policy{Mode: ReadOnly, WorkspaceRoot: realWS}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("Confine (-want +got):\n%s", d)
				}
			}
			if d := cmp.Diff(tc.wantCalls, log.calls); d != "" {
				t.Errorf("probes (-want +got):\n%s", d)
			}
			// A second call, in the other mode, reuses the verdict: no new probe.
			before := len(log.calls)
			_, err2 := p.Confine(context.Background(), argv, Policy{Mode: WorkspaceWrite, WorkspaceRoot: ws})
			if len(log.calls) != before {
				t.Errorf("second Confine probed again: %q", log.calls[before:])
			}
			if (err == nil) != (err2 == nil) {
				t.Errorf("verdict changed between calls: %v then %v", err, err2)
			}
		})
	}
}

func TestConfineWorkspaceWriteCanonicalisesTheRoot(t *testing.T) {
	// Outside the temp areas: a symlinked root under /tmp is refused instead
	// (TestConfineRefusesARootRedirectableFromTmp).
	dir, err := os.MkdirTemp("/var/tmp", "dshsim-canon-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	real := filepath.Join(dir, "real")
	os.Mkdir(real, 0o755)
	link := filepath.Join(dir, "link")
	os.Symlink(real, link)
	wantRoot, _ := filepath.EvalSymlinks(real)
	p := newProvider(t, Config{Platform: "linux", Chain: []string{"landlock"}, LauncherPath: "/l/landlock-run"})
	got, err := p.Confine(context.Background(), []string{"true"}, Policy{Mode: WorkspaceWrite, WorkspaceRoot: link})
	if err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(real, &st); err != nil {
		t.Fatal(err)
	}
	id := FileID{Dev: uint64(st.Dev), Ino: st.Ino}
	want := []string{"/l/landlock-run", "--ro", "/", "--rw", "/dev/null", "--rw", "/tmp", "--rw-inode", wantRoot, id.String(), "--", "true"}
	if d := cmp.Diff(want, got.Argv); d != "" {
		t.Errorf("argv (-want +got):\n%s", d)
	}
}

// TestConfineRefusesARootRedirectableFromTmp: a workspace-write root reached
// through a symlink inside /tmp (which confined commands may write) is not
// granted; read-only grants no root, so it is not refused there.
func TestConfineRefusesARootRedirectableFromTmp(t *testing.T) {
	for _, dir := range tempAreaDirs(t) {
		t.Run(dir, func(t *testing.T) {
			real := filepath.Join(dir, "real")
			os.Mkdir(real, 0o755)
			link := filepath.Join(dir, "link")
			os.Symlink(real, link)
			p := newProvider(t, Config{Platform: "linux", Chain: []string{"landlock"}, LauncherPath: "/l/landlock-run"})
			if _, err := p.Confine(context.Background(), []string{"true"}, Policy{Mode: WorkspaceWrite, WorkspaceRoot: link}); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "symlink "+link) {
				t.Errorf("workspace-write through %s: err = %v, want a refusal naming the symlink", link, err)
			}
			if _, err := p.Confine(context.Background(), []string{"true"}, Policy{Mode: WorkspaceWrite, WorkspaceRoot: real}); err != nil {
				t.Errorf("workspace-write on the real directory: %v", err)
			}
			if _, err := p.Confine(context.Background(), []string{"true"}, Policy{Mode: ReadOnly, WorkspaceRoot: link}); err != nil {
				t.Errorf("read-only through the link: %v", err)
			}
		})
	}
}

// tempAreaDirs makes a fresh directory (removed after the test) in each
// temp area the rule names: /tmp and the OS temp directory (TMPDIR, which
// need not lie under /tmp; t.TempDir follows GOTMPDIR, which need not lie in
// either, so it is not used here).
func tempAreaDirs(t *testing.T) []string {
	t.Helper()
	var dirs []string
	seen := map[string]bool{}
	for _, area := range []string{"/tmp", os.TempDir()} {
		if seen[filepath.Clean(area)] {
			continue
		}
		seen[filepath.Clean(area)] = true
		d, err := os.MkdirTemp(area, "dshsim-redirect-")
		if err != nil {
			t.Fatalf("a directory in the temp area %s: %v", area, err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		dirs = append(dirs, d)
	}
	return dirs
}

// fakeLauncher writes a shell script standing in for landlock-run --probe.
func fakeLauncher(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "landlock-run")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLandlockProbeOfTheLauncher(t *testing.T) {
	tests := []struct {
		name, script string
		timeout      float64
		wantEnf      Enforcement
		wantOK       bool
		wantWhy      string // in the probe's error when unusable
	}{
		{name: "fully enforced is full", script: `echo "landlock: fully enforced"`, timeout: 5000, wantEnf: Full, wantOK: true},
		{name: "partially enforced is partial", script: `echo "landlock: partially enforced (older ABI)"`, timeout: 5000, wantEnf: Partial, wantOK: true},
		{name: "exit 125 is unusable", script: `echo "landlock-run: landlock is not enforced by this kernel (ABI unsupported or disabled)" >&2; exit 125`, timeout: 5000,
			wantWhy: "exit status 125: landlock-run: landlock is not enforced by this kernel (ABI unsupported or disabled)"},
		{name: "slow launcher is usable within a long timeout", script: `sleep 0.3; echo "landlock: fully enforced"`, timeout: 15000, wantEnf: Full, wantOK: true},
		{name: "slow launcher is unusable past a short timeout", script: `sleep 1; echo "landlock: fully enforced"`, timeout: 100,
			wantWhy: "did not finish in time: context deadline exceeded (probe timeout 100ms)"},
		{name: "a program that exits 0 silently is not a runner", script: `exit 0`, timeout: 5000, wantWhy: `--probe exited 0 but printed "", not the runner's probe line`},
		{name: "a program that prints something else is not a runner", script: `echo "usage: landlock-run ..."`, timeout: 5000,
			wantWhy: `--probe exited 0 but printed "usage: landlock-run ...", not the runner's probe line`},
		{name: "the probe line inside other output is not the runner's answer", script: `echo "note: landlock: fully enforced"`, timeout: 5000,
			wantWhy: `printed "note: landlock: fully enforced", not`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			launcher := fakeLauncher(t, tc.script)
			p := newProvider(t, Config{Platform: "linux", Chain: []string{"landlock", "landlock"}, LauncherPath: launcher, ProbeTimeoutMs: ms(tc.timeout)})
			backend, enf := p.Selected()
			if (backend != "") != tc.wantOK || enf != tc.wantEnf {
				t.Errorf("Selected = (%q, %q), want ok=%v enforcement %q", backend, enf, tc.wantOK, tc.wantEnf)
			}
			probed := p.Probed()
			if tc.wantOK {
				if len(probed) != 1 || probed[0].Err != nil {
					t.Errorf("Probed = %v, want the one usable landlock probe", probed)
				}
				return
			}
			// Both entries of the chain were probed, and each says why it failed.
			if len(probed) != 2 {
				t.Fatalf("Probed = %v, want two failed probes", probed)
			}
			for _, o := range probed {
				if o.Backend != BackendLandlock || o.Err == nil || !strings.Contains(o.Err.Error(), tc.wantWhy) {
					t.Errorf("probe outcome %s: %v, want an error containing %q", o.Backend, o.Err, tc.wantWhy)
				}
			}
		})
	}
	if _, err := probeLandlock(context.Background(), "/nonexistent/landlock-run"); err == nil || !strings.Contains(err.Error(), "/nonexistent/landlock-run") {
		t.Errorf("a missing launcher: %v, want an error naming it", err)
	}
	// A launcher path naming a real program that is not landlock-run (true
	// exits 0 for any arguments) would "confine" every command by not running
	// it, and report success.
	if enf, err := probeLandlock(context.Background(), "/bin/true"); err == nil {
		t.Errorf("/bin/true probed usable (%q)", enf)
	}
}

// TestInjectedProbesSayTheyWereInjected: a constructed probe that says
// unusable is recorded as such, and a one-backend chain runs no probe.
func TestInjectedProbesSayTheyWereInjected(t *testing.T) {
	var log probeLog
	p := newProvider(t, Config{Platform: "linux", LauncherPath: "/x/landlock-run", Probes: log.probes(false, Full)})
	if b, _ := p.Selected(); b != BackendLandlock {
		t.Fatalf("selected %q", b)
	}
	got := p.Probed()
	if len(got) != 2 || got[0].Backend != BackendBwrap || !errors.Is(got[0].Err, errInjectedProbe) || got[1].Backend != BackendLandlock || got[1].Err != nil || got[1].Enforcement != Full {
		t.Errorf("Probed = %+v", got)
	}
	one := newProvider(t, Config{Platform: "linux", Chain: []string{BackendBwrap}, Probes: log.probes(false, "")})
	if b, _ := one.Selected(); b != BackendBwrap || len(one.Probed()) != 0 {
		t.Errorf("a one-backend chain: selected %q, probed %v", b, one.Probed())
	}
}

// TestRealDefaultProbes runs the real chain of this host: it either confines
// or fails closed with the structured error; on this machine class (bwrap
// installed) it selects bwrap.
func TestRealDefaultProbes(t *testing.T) {
	p := newProvider(t, Config{LauncherPath: "/nonexistent/landlock-run"})
	got, err := p.Confine(context.Background(), []string{"true"}, Policy{Mode: ReadOnly, WorkspaceRoot: t.TempDir()})
	var ue *UnavailableError
	switch {
	case err == nil:
		if got.Backend == "" || len(got.Argv) < 2 || got.Argv[len(got.Argv)-2] != "--" {
			t.Errorf("confined argv %q", got.Argv)
		}
		if _, lookErr := execLookPath("bwrap"); lookErr == nil && got.Backend != BackendBwrap {
			t.Errorf("bwrap is installed but %q was selected; the probes: %+v", got.Backend, p.Probed())
		}
	case errors.As(err, &ue):
		t.Logf("no backend on this host: %v", err)
	default:
		t.Fatalf("Confine: %v", err)
	}
}

func TestUnavailableMessageNamesTheMode(t *testing.T) {
	p := newProvider(t, Config{Platform: "plan9"})
	_, err := p.Confine(context.Background(), []string{"true"}, Policy{Mode: WorkspaceWrite, WorkspaceRoot: t.TempDir()})
	if err == nil || !strings.HasPrefix(err.Error(), `sandbox mode "workspace-write" is requested but no sandbox backend is usable on this host`) {
		t.Errorf("error = %v", err)
	}
}

// TestMeaninglessRoot is the rule's table: "/", a system tree and the home
// directory or above it are refused; a project beneath any of them, and the
// shared temp directories, are not. Each boundary has a case on both sides.
func TestMeaninglessRoot(t *testing.T) {
	tests := []struct {
		root, home string
		want       string // "" = allowed
	}{
		{root: "/", home: "/home/u", want: "it is the whole filesystem"},
		{root: "/", home: "", want: "it is the whole filesystem"},
		{root: "/etc", home: "/home/u", want: "it is the system tree /etc, which the system or other users run or trust"},
		{root: "/etc/", home: "/home/u", want: "it is the system tree /etc, which the system or other users run or trust"},
		{root: "/usr", want: "it is the system tree /usr, which the system or other users run or trust"},
		{root: "/usr/bin", want: "it lies in the system tree /usr, which the system or other users run or trust"},
		{root: "/usr/local/bin", want: "it lies in the system tree /usr, which the system or other users run or trust"},
		{root: "/var", want: "it is the system tree /var, which the system or other users run or trust"},
		{root: "/var/lib", want: "it is the system tree /var/lib, which the system or other users run or trust"},
		{root: "/opt", want: "it is the system tree /opt, which the system or other users run or trust"},
		{root: "/home", home: "/home/u", want: "it is the system tree /home, which the system or other users run or trust"},
		{root: "/lib64", want: "it is the system tree /lib64, which the system or other users run or trust"},
		{root: "/boot", want: "it is the system tree /boot, which the system or other users run or trust"},
		{root: "/etc/cron.d", want: "it lies in the system tree /etc, which the system or other users run or trust"},
		{root: "/etc/profile.d", want: "it lies in the system tree /etc, which the system or other users run or trust"},
		{root: "/etc/sudoers.d", want: "it lies in the system tree /etc, which the system or other users run or trust"},
		{root: "/var/spool", want: "it is the system tree /var/spool, which the system or other users run or trust"},
		{root: "/var/spool/cron", want: "it lies in the system tree /var/spool, which the system or other users run or trust"},
		{root: "/var/spool/cron/crontabs", want: "it lies in the system tree /var/spool, which the system or other users run or trust"},
		{root: "/usr/local/src/app", want: "it lies in the system tree /usr, which the system or other users run or trust"},
		{root: "/boot/efi", want: "it lies in the system tree /boot, which the system or other users run or trust"},
		{root: "/proc/self/cwd", want: "it lies in the system tree /proc, which the system or other users run or trust"},
		{root: "/sys/fs/cgroup", want: "it lies in the system tree /sys, which the system or other users run or trust"},
		{root: "/dev/shm", want: "it lies in the system tree /dev, which the system or other users run or trust"},
		{root: "/sbin/x", want: "it lies in the system tree /sbin, which the system or other users run or trust"},
		{root: "/dev", want: "it is the system tree /dev, which the system or other users run or trust"},
		{root: "/proc", want: "it is the system tree /proc, which the system or other users run or trust"},
		{root: "/sys", want: "it is the system tree /sys, which the system or other users run or trust"},
		{root: "/root", home: "/root", want: "it is the system tree /root, which the system or other users run or trust"},
		{root: "/home/u", home: "/home/u", want: "it is the home directory, whose start-up files and configuration the next login or tool run executes unconfined"},
		{root: "/data", home: "/data/users/u", want: "it holds the home directory /data/users/u, whose start-up files and configuration the next login or tool run executes unconfined"},
		{root: "/home/u/proj", home: "/home/u"},
		{root: "/home/u-evil", home: "/home/u"},          // a sibling sharing the home's name as a prefix
		{root: "/home/u", home: "/home/uu"},              // a home sharing the root's name as a prefix is not beneath it
		{root: "/etc-backup", home: "/home/u"},           // not /etc
		{root: "/etcfoo/x", home: "/home/u"},             // nor beneath it: the boundary is a path component
		{root: "/usrlocal", home: "/home/u"},             // not /usr
		{root: "/var/spooler", home: "/home/u"},          // not /var/spool
		{root: "/device", home: "/home/u"},               // not /dev
		{root: "/srv/site", home: "/home/u"},             // a project beneath a system tree's root
		{root: "/opt/tool", home: "/home/u"},             // likewise
		{root: "/var/www/site", home: "/home/u"},         // likewise
		{root: "/var/lib/ci/workspace", home: "/home/u"}, // a CI workspace beneath the state directory
		{root: "/var/tmp/ws", home: "/home/u"},           // the scratch area the tests use
		{root: "/tmp", home: "/home/u"},                  // the shared temp area is already writable
		{root: "/tmp", home: "/"},                        // a home of / (daemons) names no home
		{root: "/data/users/v", home: "/data/users/u"},   // a neighbour of the home, not above it
	}
	for _, tc := range tests {
		t.Run(tc.root+" home="+tc.home, func(t *testing.T) {
			why, bad := MeaninglessRoot(tc.root, tc.home)
			if bad != (tc.want != "") || why != tc.want {
				t.Errorf("MeaninglessRoot(%q, %q) = %q, %v; want %q", tc.root, tc.home, why, bad, tc.want)
			}
		})
	}
}

// TestConfineRefusesAMeaninglessRoot: Confine (and so every confiner, which
// all call Validate) refuses such a root for workspace-write with an error
// naming it, before any backend is probed; read-only grants no root and
// runs there.
func TestConfineRefusesAMeaninglessRoot(t *testing.T) {
	home, err := os.MkdirTemp("/var/tmp", "dshsim-home-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	t.Setenv("HOME", home)
	log := &probeLog{}
	p := newProvider(t, Config{Platform: "linux", Probes: log.probes(true, Full)})
	for _, root := range []string{"/", "/etc", "/usr", home, filepath.Dir(home)} {
		_, err := p.Confine(context.Background(), []string{"true"}, Policy{Mode: WorkspaceWrite, WorkspaceRoot: root})
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "workspace root "+root+" is not granted for workspace-write: ") {
			t.Errorf("workspace-write at %s: err = %v, want a refusal naming the root", root, err)
		}
	}
	if len(log.calls) != 0 {
		t.Errorf("a refused root probed backends: %q", log.calls)
	}
	if _, err := p.Confine(context.Background(), []string{"true"}, Policy{Mode: ReadOnly, WorkspaceRoot: "/"}); err != nil {
		t.Errorf("read-only at /: %v", err)
	}
	proj := filepath.Join(home, "proj")
	os.Mkdir(proj, 0o755)
	if _, err := p.Confine(context.Background(), []string{"true"}, Policy{Mode: WorkspaceWrite, WorkspaceRoot: proj}); err != nil {
		t.Errorf("workspace-write at a project in the home directory: %v", err)
	}
}

// TestProbeErrorsSayWhy: a probe command that fails names itself, its exit
// status and its first stderr line; a missing one names the lookup failure;
// one past its deadline says so.
func TestProbeErrorsSayWhy(t *testing.T) {
	err := runProbe(context.Background(), nil, "sh", "-c", "echo; echo 'bwrap: Creating new namespace failed: No space left on device' >&2; echo more >&2; exit 1")
	if err == nil || err.Error() != "probe sh: exit status 1: bwrap: Creating new namespace failed: No space left on device" {
		t.Errorf("failing probe: %v", err)
	}
	t.Setenv("PATH", t.TempDir())
	if err := CheckBwrap(context.Background()); err == nil || !strings.Contains(err.Error(), `"bwrap": executable file not found`) {
		t.Errorf("bwrap not on PATH: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	<-ctx.Done()
	if err := runProbe(ctx, nil, "/bin/sh", "-c", "true"); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "did not finish in time") {
		t.Errorf("probe past its deadline: %v", err)
	}
}

// TestProbeOutputArrivingAfterExitIsKept: a probe command that exits 0 while
// its output is still on its way (here a background child holds stderr for
// 300ms; on a loaded machine, the goroutine copying bwrap's stderr was late)
// passes. With a fixed 100ms wait for the output it failed ("WaitDelay
// expired before I/O complete") and the chain fell through to Landlock.
func TestProbeOutputArrivingAfterExitIsKept(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := runProbe(ctx, nil, "sh", "-c", "(sleep 0.3; echo late >&2) & exit 0"); err != nil {
		t.Errorf("a probe whose output arrives 300ms after its exit: %v", err)
	}
	launcher := fakeLauncher(t, `(sleep 0.3) & echo "landlock: fully enforced"`)
	if enf, err := probeLandlock(ctx, launcher); err != nil || enf != Full {
		t.Errorf("a runner probe whose stdout stays open 300ms after its exit: %q, %v", enf, err)
	}
}
