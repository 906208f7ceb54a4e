package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestProfiles(t *testing.T) {
	ro := Policy{Mode: ReadOnly, WorkspaceRoot: "/ws"}
	ww := Policy{Mode: WorkspaceWrite, WorkspaceRoot: "/ws"}
	tests := []struct {
		name string
		got  []string
		want []string
	}{
		{name: "bwrap read-only exact", got: BwrapArgs(ro), want: []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--die-with-parent", "--unshare-pid", "--cap-drop", "ALL", "--remount-ro", "/proc"}},
		{name: "bwrap workspace-write adds tmpfs then binds the root by descriptor", got: BwrapArgs(ww),
			want: []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--die-with-parent", "--unshare-pid", "--cap-drop", "ALL", "--remount-ro", "/proc", "--tmpfs", "/tmp", "--bind-fd", "4", "/ws"}},
		{name: "bwrap treats an unknown mode as read-only", got: BwrapArgs(Policy{Mode: "bogus", WorkspaceRoot: "/ws"}), want: BwrapArgs(ro)},
		{name: "landlock read-only grants root and dev null", got: LandlockArgs(ro), want: []string{"--ro", "/", "--rw", "/dev/null"}},
		{name: "landlock workspace-write adds tmp and workspace", got: LandlockArgs(ww), want: []string{"--ro", "/", "--rw", "/dev/null", "--rw", "/tmp", "--rw", "/ws"}},
		{name: "landlock pins a validated workspace root", got: LandlockArgs(Policy{Mode: WorkspaceWrite, WorkspaceRoot: "/ws", WorkspaceID: FileID{Dev: 2049, Ino: 77}}),
			want: []string{"--ro", "/", "--rw", "/dev/null", "--rw", "/tmp", "--rw-inode", "/ws", "2049:77"}},
		{name: "landlock pins a /tmp workspace wherever it is granted", got: LandlockArgs(Policy{Mode: WorkspaceWrite, WorkspaceRoot: "/tmp", WorkspaceID: FileID{Dev: 1, Ino: 2}}),
			want: []string{"--ro", "/", "--rw", "/dev/null", "--rw-inode", "/tmp", "1:2", "--rw-inode", "/tmp", "1:2"}},
		{name: "landlock read-only pins nothing", got: LandlockArgs(Policy{Mode: ReadOnly, WorkspaceRoot: "/ws", WorkspaceID: FileID{Dev: 2049, Ino: 77}}), want: []string{"--ro", "/", "--rw", "/dev/null"}},
		{name: "seatbelt read-only", got: SeatbeltArgs(ReadOnly, nil), want: []string{"-p", seatbeltReadOnlyProfile}},
		{name: "seatbelt workspace-write appends one allow form", got: SeatbeltArgs(WorkspaceWrite, []string{"/ws", "/private/tmp"}),
			want: []string{"-p", seatbeltReadOnlyProfile + ` (allow file-write* (subpath "/ws") (subpath "/private/tmp"))`}},
		{name: "sbpl quoting escapes backslash and quote", got: []string{sbplString(`/a "b"\c`)}, want: []string{`"/a \"b\"\\c"`}},
		{name: "windows read-only", got: WindowsACLArgs(ro, `C:\T`, nil), want: []string{"--workspace", "/ws", "--temp", `C:\T`, "--mode", "read-only"}},
		{name: "windows agentless workspace-write", got: WindowsACLArgs(ww, `C:\T`, nil), want: []string{"--workspace", "/ws", "--temp", `C:\T`, "--mode", "workspace-write"}},
		{name: "windows session workspace-write adds sids and private temp", got: WindowsACLArgs(ww, `C:\T`, &WindowsSession{TempDir: `C:\T\dsh-1`, WriteSID: "S-1-4-1", TempWriteSID: "S-1-4-2"}),
			want: []string{"--workspace", "/ws", "--temp", `C:\T\dsh-1`, "--mode", "workspace-write", "--write-sid", "S-1-4-1", "--temp-write-sid", "S-1-4-2"}},
		{name: "wrap keeps the caller argv exact", got: Wrap([]string{"r"}, []string{"--x"}, []string{"bash", "-c", "echo hi"}), want: []string{"r", "--x", "--", "bash", "-c", "echo hi"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, tc.got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestWritableRoots(t *testing.T) {
	canonNone := func(s string) string { return s }
	tests := []struct {
		name   string
		policy Policy
		tmpdir string
		want   []string
	}{
		{name: "read-only has no writable roots", policy: Policy{Mode: ReadOnly, WorkspaceRoot: "/ws"}, tmpdir: "/t", want: []string{}},
		{name: "workspace-write is workspace, tmp, tmpdir", policy: Policy{Mode: WorkspaceWrite, WorkspaceRoot: "/ws"}, tmpdir: "/t", want: []string{"/ws", "/tmp", "/t"}},
		{name: "root equal to tmpdir is granted once", policy: Policy{Mode: WorkspaceWrite, WorkspaceRoot: "/t"}, tmpdir: "/t", want: []string{"/t", "/tmp"}},
		{name: "tmpdir equal to /tmp is granted once", policy: Policy{Mode: WorkspaceWrite, WorkspaceRoot: "/ws"}, tmpdir: "/tmp", want: []string{"/ws", "/tmp"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, writableRoots(tc.policy, tc.tmpdir, canonNone)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestCanonicalPath(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	wantReal, _ := filepath.EvalSymlinks(real)
	if got := canonicalPath(link); got != wantReal {
		t.Errorf("canonicalPath(symlink) = %q, want %q", got, wantReal)
	}
	missing := filepath.Join(dir, "missing", "x")
	if got := canonicalPath(missing); got != missing {
		t.Errorf("canonicalPath(missing) = %q, want unchanged", got)
	}
	roots := writableRoots(Policy{Mode: WorkspaceWrite, WorkspaceRoot: link}, os.TempDir(), canonicalPath)
	if len(roots) < 2 || roots[0] != wantReal || roots[1] != "/tmp" {
		t.Errorf("writableRoots = %q", roots)
	}
	seen := map[string]bool{}
	for _, r := range roots {
		if seen[r] {
			t.Errorf("duplicate root %q in %q", r, roots)
		}
		seen[r] = true
	}
}

func TestBwrapHidesWorkdir(t *testing.T) {
	tests := []struct {
		name    string
		mode    Mode
		ws, dir string
		want    bool
	}{
		{"a scratch dir under /tmp is hidden in workspace-write", WorkspaceWrite, "/home/u/proj", "/tmp/scratch", true},
		{"/tmp itself is hidden in workspace-write", WorkspaceWrite, "/home/u/proj", "/tmp", true},
		{"the workspace is visible", WorkspaceWrite, "/home/u/proj", "/home/u/proj", false},
		{"a dir under the workspace is visible", WorkspaceWrite, "/home/u/proj", "/home/u/proj/sub", false},
		{"a dir outside /tmp is visible (read-only)", WorkspaceWrite, "/home/u/proj", "/etc", false},
		{"a workspace under /tmp is re-bound on the tmpfs", WorkspaceWrite, "/tmp/ws", "/tmp/ws/sub", false},
		{"a sibling of a workspace under /tmp is hidden", WorkspaceWrite, "/tmp/ws", "/tmp/ws2", true},
		{"a name that only starts with tmp is visible", WorkspaceWrite, "/home/u/proj", "/tmpfoo", false},
		{"read-only binds the host /tmp", ReadOnly, "/home/u/proj", "/tmp/scratch", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := bwrapHidesWorkdir(Policy{Mode: tc.mode, WorkspaceRoot: tc.ws}, tc.dir); got != tc.want {
				t.Errorf("bwrapHidesWorkdir(%s, ws %s, dir %s) = %v, want %v", tc.mode, tc.ws, tc.dir, got, tc.want)
			}
		})
	}
}
