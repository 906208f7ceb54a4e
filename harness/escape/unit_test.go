package escape_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/harness/escape"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/sandboxtest"
)

func TestParseAttemptRejectsBadHeadersNamingFileLineAndField(t *testing.T) {
	cases := []struct {
		name, file, src, want string
	}{
		{"missing attack", "x.sh", "echo hi\n", "x.sh:1: attack: missing"},
		{"empty attack", "x.sh", "# attack:\n", "x.sh:1: attack: empty"},
		{"unknown class", "x.sh", "# attack: a\n# class: nope\n", "x.sh:2: class: unknown class \"nope\""},
		{"unknown fixture", "x.sh", "# attack: a\n# needs: root gpu\n", "x.sh:2: needs: unknown fixture \"gpu\""},
		{"bad settle", "x.sh", "# attack: a\n# settle: forever\n", "x.sh:2: settle:"},
		{"metadata without effect", "x.sh", "# attack: a\n# class: metadata\n", "x.sh:1: effect: missing"},
		{"unknown effect", "x.sh", "# attack: a\n# class: metadata\n# effect: teleport\n", `x.sh:3: effect: class metadata wants one of chmod, chown, utimes, setxattr, chattr, got "teleport"`},
		{"isolation without effect", "x.sh", "# attack: a\n# class: isolation\n", "x.sh:1: effect: missing (class isolation names its operation: one of signal, abstract-unix, secret-env, agent)"},
		{"an isolation effect on a metadata attempt", "x.sh", "# attack: a\n# class: metadata\n# effect: signal\n", `x.sh:3: effect: class metadata wants one of`},
		{"an effect on a path attempt", "x.sh", "# attack: a\n# effect: chmod\n", "x.sh:2: effect: only classes metadata and isolation name an effect, not path"},
		{"root without the capability it needs", "x.sh", "# attack: a\n# needs: root\n", "x.sh:1: capability: an attempt names the capability it needs root for exactly when it needs root"},
		{"a capability without root", "x.sh", "# attack: a\n# capability: CAP_MKNOD\n", "x.sh:1: capability: an attempt names the capability"},
		{"a capability that is not one", "x.sh", "# attack: a\n# needs: root\n# capability: mknod\n", `x.sh:3: capability: want a capability name like CAP_MKNOD, got "mknod"`},
		{"unknown fixture among new ones", "x.sh", "# attack: a\n# needs: sibling signal socket secret gpu\n", "x.sh:2: needs: unknown fixture \"gpu\""},
		{"unknown field", "x.sh", "# attack: a\n# colour: red\n", "x.sh:2: unknown header field \"colour\""},
		{"header without key", "x.sh", "# attack: a\n# just words\n", "x.sh:2: header line has no"},
		{"wrong file name", "x.txt", "# attack: a\n", "attempt files are named <name>.sh (a script) or <name>.ts (a run_code program)"},
		{"a program's header is // comments", "x.ts", "# attack: a\nreturn 1;\n", "x.ts:1: attack: missing (every attempt starts with \"// attack: <what it tries>\")"},
		{"a hostile recording is not a file", "x.sh", "# attack: a\n# class: recording\n", "x.sh:2: class: recording attempts are hostile recordings (package harness/replay/hostile), not files"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := escape.ParseAttempt(tc.file, []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func TestParseAttemptReadsEveryField(t *testing.T) {
	a, err := escape.ParseAttempt("attempts/x.sh", []byte("# attack: do it\n# class: device\n# needs: root loopdev\n# capability: CAP_MKNOD\n# settle: 1s\necho\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "x" || a.Attack != "do it" || a.Class != escape.ClassDevice || !a.Need("loopdev") || a.Capability != "CAP_MKNOD" || a.Settle.Seconds() != 1 || a.Program {
		t.Fatalf("%+v", a)
	}
	p, err := escape.ParseAttempt("attempts/y.ts", []byte("// attack: from a program\n// settle: 2s\nreturn 1;\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "y" || !p.Program || p.Attack != "from a program" || p.Settle.Seconds() != 2 {
		t.Fatalf("%+v", p)
	}
}

func TestAdmit(t *testing.T) {
	d, _ := sandbox.DialectOf(sandbox.BackendLandlock)
	ungoverned := d.Ungoverned
	full := escape.Report{Enforcement: sandbox.Full, ABI: 5, TempArea: escape.TempHost, Ungoverned: ungoverned}
	partial2 := escape.Report{Enforcement: sandbox.Partial, ABI: 2, TempArea: escape.TempHost}
	bwrap := escape.Report{Enforcement: sandbox.Full, TempArea: escape.TempFresh}
	isolating := escape.Report{Enforcement: sandbox.Full, TempArea: escape.TempFresh, Isolated: []string{"signal: its own PID namespace"}}
	cases := []struct {
		name   string
		class  escape.Class
		effect string
		mode   sandbox.Mode
		r      escape.Report
		notice bool
		want   bool
	}{
		{"a path write is never admitted under full", escape.ClassPath, "", sandbox.WorkspaceWrite, full, false, false},
		{"a path write is not admitted under partial either", escape.ClassPath, "", sandbox.WorkspaceWrite, partial2, true, false},
		{"truncate below ABI 3 with the notice is admitted", escape.ClassTruncate, "", sandbox.ReadOnly, partial2, true, true},
		{"truncate below ABI 3 without the notice is not", escape.ClassTruncate, "", sandbox.ReadOnly, partial2, false, false},
		{"truncate under full is not admitted", escape.ClassTruncate, "", sandbox.ReadOnly, full, false, false},
		{"metadata is not admitted even under partial", escape.ClassMetadata, "chmod", sandbox.ReadOnly, partial2, true, false},
		{"metadata the backend lists as ungoverned is admitted", escape.ClassMetadata, "chmod", sandbox.ReadOnly, full, false, true},
		{"metadata the backend does not list is not admitted", escape.ClassMetadata, "chmod", sandbox.ReadOnly, escape.Report{Enforcement: sandbox.Full, Ungoverned: []string{"utimes: x"}}, false, false},
		{"host /tmp is Landlock's temp area under workspace-write", escape.ClassTemp, "", sandbox.WorkspaceWrite, full, false, true},
		{"host /tmp is not writable under read-only", escape.ClassTemp, "", sandbox.ReadOnly, full, false, false},
		{"bwrap's temp area is a fresh tmpfs, so a host /tmp write is not admitted", escape.ClassTemp, "", sandbox.WorkspaceWrite, bwrap, false, false},
		{"devices are not promised", escape.ClassDevice, "", sandbox.WorkspaceWrite, full, false, true},
		{"chattr is admitted once Landlock lists it", escape.ClassMetadata, "chattr", sandbox.WorkspaceWrite, full, false, true},
		{"signalling the harness is not promised by any mode", escape.ClassIsolation, "signal", sandbox.ReadOnly, full, false, true},
		{"a backend that claims to isolate signals may not let one through", escape.ClassIsolation, "signal", sandbox.ReadOnly, isolating, false, false},
		{"a claim about signals does not cover the environment", escape.ClassIsolation, "secret-env", sandbox.ReadOnly, isolating, false, true},
		{"nothing a hostile recording does to the host is admitted", escape.ClassRecording, "", sandbox.DangerFullAccess, escape.Report{Enforcement: escape.Contained, TempArea: escape.TempPrivate}, false, false},
		{"not even under a partial report", escape.ClassRecording, "", sandbox.WorkspaceWrite, partial2, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got, why := escape.Admit(tc.class, tc.effect, tc.mode, tc.r, tc.notice); got != tc.want {
				t.Fatalf("got %v (%s), want %v", got, why, tc.want)
			}
		})
	}
}

func TestDiffSeesEveryKindOfChange(t *testing.T) {
	dir := sandboxtest.TempDir(t, "dshsim-diff-") // a file system with user xattrs and inode flags, unlike some /tmp
	f := filepath.Join(dir, "f")
	for name, mutate := range map[string]func() error{
		"f: content":   func() error { return os.WriteFile(f, []byte("changed"), 0o644) },
		"f: mode":      func() error { return os.Chmod(f, 0o600) },
		"f: removed":   func() error { return os.Remove(f) },
		"new: created": func() error { return os.WriteFile(filepath.Join(dir, "new"), nil, 0o644) },
		"f: xattr":     func() error { return unix.Setxattr(f, "user.dshsim", []byte("changed"), 0) },
		"f: flags": func() error {
			fd, err := unix.Open(f, unix.O_RDONLY, 0)
			if err != nil {
				return err
			}
			defer unix.Close(fd)
			cur, err := unix.IoctlGetInt(fd, unix.FS_IOC_GETFLAGS)
			if err != nil {
				return err
			}
			return unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, cur|0x40) // no-dump, which the owner may set
		},
	} {
		t.Run(name, func(t *testing.T) {
			os.Remove(f) // a fresh inode: no flags, no attributes
			if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := unix.Setxattr(f, "user.dshsim", []byte("original"), 0); err != nil {
				t.Fatal(err)
			}
			os.Remove(filepath.Join(dir, "new"))
			before, err := escape.Take(map[string]string{"d": dir}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := mutate(); err != nil {
				t.Fatal(err)
			}
			after, err := escape.Take(map[string]string{"d": dir}, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range escape.Diff(before, after) {
				if c.Path != "d" { // the directory's own mtime
					got = append(got, strings.TrimPrefix(c.String(), "d/"))
				}
			}
			if len(got) != 1 || !strings.HasPrefix(got[0], name) {
				t.Fatalf("changes %v, want %q", got, name)
			}
		})
	}
}

// TestTakeFailsInsteadOfSeeingNoChange: a path the snapshot cannot read is
// an error, never an entry that compares equal.
func TestTakeFailsInsteadOfSeeingNoChange(t *testing.T) {
	if _, err := escape.Take(map[string]string{"mem": "/proc/self/mem"}, nil); err == nil {
		t.Fatal("Take of an unreadable file returned no error")
	}
}

func TestDropIdentity(t *testing.T) {
	text := "title\n\n" + escape.SectionPrefix + "root (root = uid 0)]\nroot row\n\n" + escape.SectionPrefix + "user (user = x)]\nuser row\n\n" + escape.SectionEnd + "\n\nattacks\n"
	want := "title\n\n" + escape.SectionPrefix + "user (user = x)]\nuser row\n\n" + escape.SectionEnd + "\n\nattacks\n"
	if got := escape.DropIdentity(text, "root"); got != want {
		t.Errorf("DropIdentity:\n%s\nwant:\n%s", got, want)
	}
	if got := escape.DropIdentity(text, "nobody"); got != text {
		t.Errorf("dropping an absent identity changed the text:\n%s", got)
	}
}

func TestSelect(t *testing.T) {
	all := []escape.Attempt{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	if got, err := escape.Select(all, []string{"c", "a"}); err != nil || len(got) != 2 || got[0].Name != "a" || got[1].Name != "c" {
		t.Errorf("Select(c, a) = %v, %v; want a, c in corpus order", got, err)
	}
	if _, err := escape.Select(all, []string{"a", "zz"}); err == nil {
		t.Error("Select of an unknown attempt did not fail")
	}
}
