package isolate

import (
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestEtcAllowed: the /etc of a child's root is an allowlist; every
// secret of /etc stays out, and so does what is merely not needed.
func TestEtcAllowed(t *testing.T) {
	for name, want := range map[string]bool{
		"ld.so.cache": true, "alternatives": true, "hosts": true, "nsswitch.conf": true, "localtime": true,
		"hostname": true, "python3": true, "python3.11": true, "python3.12": true,
		"shadow": false, "gshadow": false, "shadow-": false, "ssh": false, "ssl": false, "gitconfig": false,
		"passwd": false, "group": false, "sudoers": false, "resolv.conf": false, "pki": false,
		"python3.": false, "python3.x": false, "python": false, "apt": false, "": false,
	} {
		if got := EtcAllowed(name); got != want {
			t.Errorf("EtcAllowed(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestIDLines: passwd and group name only the ids the child can meet, and
// a group lists no members.
func TestIDLines(t *testing.T) {
	passwd := "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/:/usr/sbin/nologin\nalice:x:1000:1000::/home/alice:/bin/bash\n" +
		"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\nbroken\nbad:x:notanumber:1::/:/bin/sh\n"
	if got, want := idLines(passwd, []int{0, 65534, 1000}, false), "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"; got != want {
		t.Errorf("passwd:\n%s\nwant\n%s", got, want)
	}
	group := "root:x:0:\ndocker:x:999:alice,bob\nnogroup:x:65534:alice\n"
	if got, want := idLines(group, []int{0, 65534}, true), "root:x:0:\nnogroup:x:65534:\n"; got != want {
		t.Errorf("group:\n%s\nwant\n%s", got, want)
	}
}

// TestShareTarget: a share is bound at its own path, left alone in a
// system directory the root holds anyway, and refused where the root makes
// its own (/etc, /dev, /proc, / and /tmp themselves).
func TestShareTarget(t *testing.T) {
	for _, tc := range []struct {
		p    string
		bind bool
		err  string
	}{
		{"/work/recordings/x", true, ""},
		{"/tmp/x", true, ""},
		{"/home/u/rec", true, ""},
		{"/opt/oracle", true, ""},
		{"/usr/local/bin/landlock-run", false, ""},
		{"/usr", false, ""},
		{"/lib64/x", false, ""},
		{"/usrx/y", true, ""},
		{"/etcetera/y", true, ""},
		{"/", false, "cannot share / itself"},
		{"/tmp", false, "cannot share /tmp itself"},
		{"/etc/x", false, "the child's /etc is made for it"},
		{"/dev/shm/x", false, "the child's /dev is made for it"},
		{"/proc/1", false, "the child's /proc is made for it"},
		{"relative", false, "want an absolute, clean path"},
		{"/a/../b", false, "want an absolute, clean path"},
	} {
		bind, err := shareTarget(tc.p)
		if bind != tc.bind || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("shareTarget(%q) = %v, %v; want %v, %q", tc.p, bind, err, tc.bind, tc.err)
		}
	}
}

// TestChildEnv: the child's environment is an allowlist, and no name that
// counts as a secret passes, not even one the caller asks for.
func TestChildEnv(t *testing.T) {
	environ := []string{
		"PATH=/usr/bin", "HOME=/root", "LANG=C.UTF-8", "LC_ALL=C", "TERM=xterm", "GOCOVERDIR=/c",
		"DSHSIM_SCRATCH=/s", "DSHSIM_ESCAPE_API_KEY=k", "DEEPSEEK_API_KEY=sk-1", "OPENAI_API_KEY=sk-2",
		"GITHUB_TOKEN=t", "AWS_SECRET_ACCESS_KEY=s", "DB_PASSWORD=p", "SSH_AUTH_SOCK=/run/a", "MYSQL_PWD=p",
		"AWS_CA_BUNDLE=/b", "SSL_CERT_FILE=/c", "PYENV_ROOT=/p", "EXTRA=1", "EXTRA_TOKEN=2", "noequals", "=novalue",
	}
	got := ChildEnv(environ, []string{"EXTRA", "EXTRA_TOKEN", "DEEPSEEK_API_KEY"})
	want := []string{"PATH=/usr/bin", "HOME=/root", "LANG=C.UTF-8", "LC_ALL=C", "TERM=xterm", "GOCOVERDIR=/c", "DSHSIM_SCRATCH=/s", "EXTRA=1"}
	if !slices.Equal(got, want) {
		t.Errorf("ChildEnv = %q\nwant %q", got, want)
	}
	if got := ChildEnv(environ, nil); slices.Contains(got, "EXTRA=1") {
		t.Errorf("EXTRA passed without being asked for: %q", got)
	}
}

// TestBounds: defaults fill the zero fields, bounds below what the run
// stage needs are refused, and each bound is named with its value.
func TestBounds(t *testing.T) {
	d := Bounds{}.withDefaults()
	if d != DefaultBounds {
		t.Errorf("defaults %+v, want %+v", d, DefaultBounds)
	}
	if got := (Bounds{Tasks: 64}).withDefaults(); got.Tasks != 64 || got.Memory != DefaultBounds.Memory {
		t.Errorf("one bound given: %+v", got)
	}
	for _, tc := range []struct {
		b   Bounds
		err string
	}{
		{Bounds{}, ""},
		{Bounds{Memory: MinMemory, Tasks: MinTasks, FileSize: 1, CPU: time.Second}, ""},
		{Bounds{Memory: MinMemory - 1}, "a memory bound (-memory) of"},
		{Bounds{Memory: -1}, "a memory bound (-memory) of"},
		{Bounds{Tasks: MinTasks - 1}, "(-processes) of 31 processes and threads: want at least 32"},
		{Bounds{FileSize: -1}, "a file size bound (-file-size) of -1 bytes"},
		{Bounds{CPU: time.Second - 1}, "a CPU time bound (-cpu-time) of"},
	} {
		err := tc.b.Check()
		if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%+v.Check() = %v, want %q", tc.b, err, tc.err)
		}
	}
	b := Bounds{Memory: 512 << 20, Tasks: 100, FileSize: 1 << 30, CPU: 90 * time.Second}
	if got, want := b.String(), "memory bound 512 MiB per process, process bound 100 processes and threads, file size bound 1 GiB per file, CPU time bound 1m30s per process"; got != want {
		t.Errorf("String() = %q\nwant %q", got, want)
	}
	for n, want := range map[int64]string{2 << 30: "2 GiB", 3 << 20: "3 MiB", 4096: "4 KiB", 1000: "1000 bytes", 0: "0 bytes", 1<<30 + 1<<20: "1025 MiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestRlimits: each bound is a limit its holder cannot raise (hard equal
// to soft), but the CPU time's hard limit is a second above, so SIGXCPU
// comes first; a CPU bound in part of a second rounds up; a hard limit the
// caller already has that is stricter stays.
func TestRlimits(t *testing.T) {
	got := Bounds{Memory: 1 << 30, Tasks: 50, FileSize: 1 << 20, CPU: 1500 * time.Millisecond}.rlimits()
	want := []rlimit{{syscall.RLIMIT_DATA, 1 << 30, 1 << 30}, {rlimitNproc, 50, 50}, {syscall.RLIMIT_FSIZE, 1 << 20, 1 << 20}, {syscall.RLIMIT_CPU, 2, 3}}
	if !slices.Equal(got, want) {
		t.Errorf("rlimits = %v, want %v", got, want)
	}
	cpu := want[3]
	for hard, w := range map[uint64]rlimit{^uint64(0): cpu, 3: cpu, 2: {syscall.RLIMIT_CPU, 2, 2}, 1: {syscall.RLIMIT_CPU, 1, 1}} {
		if got := cpu.within(hard); got != w {
			t.Errorf("within(%d) = %v, want %v", hard, got, w)
		}
	}
}

// TestBoundHit: how the run stage ended names the bound it reached, and
// nothing else names one.
func TestBoundHit(t *testing.T) {
	b := Bounds{Memory: 512 << 20, Tasks: 64, FileSize: 1 << 20, CPU: 10 * time.Second}
	for _, tc := range []struct {
		name string
		e    ending
		want string
	}{
		{"SIGXCPU", ending{Signal: syscall.SIGXCPU, CPU: 10 * time.Second}, "CPU time bound 10s per process"},
		{"SIGKILL at the hard limit", ending{Signal: syscall.SIGKILL, CPU: 11 * time.Second}, "CPU time bound 10s per process"},
		{"SIGKILL just below", ending{Signal: syscall.SIGKILL, CPU: 10*time.Second - 1}, ""},
		{"SIGXFSZ", ending{Signal: syscall.SIGXFSZ}, "file size bound 1 MiB per file"},
		{"Go out of memory", ending{Exited: true, Code: 2, Tail: "runtime: out of memory: cannot allocate 1073741824-byte block (3997696 in use)\nfatal error: out of memory\n"}, "memory bound 512 MiB per process"},
		{"out of memory, exit 1", ending{Exited: true, Code: 1, Tail: "fatal error: out of memory"}, ""},
		{"crashed holding most of the bound", ending{Exited: true, Code: 2, Data: 448 << 20}, "memory bound 512 MiB per process"},
		{"crashed holding less", ending{Exited: true, Code: 2, Data: 448<<20 - 1}, ""},
		{"exited holding most of the bound", ending{Exited: true, Code: 1, Data: 500 << 20}, ""},
		{"a thread not made", ending{Exited: true, Code: 2, Tail: "runtime: failed to create new OS thread (have 9 already; errno=11)\nfatal error: newosproc"}, "process bound 64 processes and threads"},
		{"cgo's thread not made", ending{Signal: syscall.SIGABRT, Tail: "runtime/cgo: pthread_create failed: Resource temporarily unavailable\nSIGABRT: abort"}, "process bound 64 processes and threads"},
		{"a thread not made, SIGSEGV", ending{Signal: syscall.SIGSEGV, Tail: "pthread_create failed"}, ""},
		{"stopped and killed", ending{Signal: syscall.SIGKILL, Stopped: syscall.SIGSTOP, CPU: time.Hour}, ""},
		{"killed", ending{Signal: syscall.SIGKILL}, ""},
		{"exit 0", ending{Exited: true}, ""},
	} {
		if got := boundHit(b, tc.e); got != tc.want {
			t.Errorf("%s: boundHit = %q, want %q", tc.name, got, tc.want)
		}
	}
	if got, want := (ending{Signal: syscall.SIGXCPU}).describe(b), "was killed (CPU time limit exceeded): it reached its CPU time bound 10s per process"; got != want {
		t.Errorf("describe = %q, want %q", got, want)
	}
	oom := ending{Exited: true, Code: 2, Tail: "goroutine 1 [running]:\nfatal error: runtime: cannot allocate memory\n\nruntime stack:\n"}
	if got, want := oom.describe(b), "exited with status 2 (fatal error: runtime: cannot allocate memory): it reached its memory bound 512 MiB per process"; got != want {
		t.Errorf("describe = %q, want %q", got, want)
	}
	if got, want := (ending{Signal: syscall.SIGKILL, Stopped: syscall.SIGSTOP}).describe(b), "was stopped (stopped (signal)) and killed: something it ran signalled it"; got != want {
		t.Errorf("describe = %q, want %q", got, want)
	}
}
