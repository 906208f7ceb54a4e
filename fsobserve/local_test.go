package fsobserve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/harness"
	"github.com/dshsim/dshsim/pipeline"
)

// realTemp returns a canonical temp dir (t.TempDir may sit under a symlink).
func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func newLocal(t *testing.T, dir string, opts ...Option) *Local {
	t.Helper()
	l, err := NewLocal(append([]Option{WithCwd(dir)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// localWithFile returns a canonical temp dir holding the file name with
// content s, a Local rooted there, and the file's path.
func localWithFile(t *testing.T, name, s string) (dir string, l *Local, p string) {
	t.Helper()
	dir = realTemp(t)
	p = filepath.Join(dir, name)
	harness.MustWrite(t, p, s)
	return dir, newLocal(t, dir), p
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func resolve(t *testing.T, l *Local, p string) Target {
	t.Helper()
	tg, err := l.Resolve(p, "")
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func version(t *testing.T, l *Local, tg Target) string {
	t.Helper()
	info, ok, err := l.Stat(tg)
	if err != nil || !ok {
		t.Fatalf("stat %s: %v exists=%v", tg.Display, err, ok)
	}
	return info.Version
}

func wantCode(t *testing.T, err error, code, msg string) {
	t.Helper()
	name, c, ok := pipeline.CodeOf(err)
	if !ok || name != ErrorName || c != code {
		t.Fatalf("error = %v (%s/%s), want code %s", err, name, c, code)
	}
	if msg != "" && err.Error() != msg {
		t.Fatalf("message = %q, want %q", err.Error(), msg)
	}
}

// noResidue asserts dir holds exactly the names given (no staging leftovers).
func noResidue(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Fatalf("directory %s holds %v, want %v", dir, got, names)
	}
}

func TestResolve(t *testing.T) {
	dir := realTemp(t)
	harness.MustWrite(t, filepath.Join(dir, "real", "f.txt"), "x")
	if err := os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	l := newLocal(t, dir)
	cases := []struct {
		name, path, cwd   string
		display, key      string
		wantCode, wantMsg string
	}{
		{name: "relative path resolves against the given cwd", path: "f.txt", cwd: filepath.Join(dir, "real"), display: filepath.Join(dir, "real/f.txt"), key: filepath.Join(dir, "real/f.txt")},
		{name: "relative path without cwd uses the provider cwd", path: "real/f.txt", display: filepath.Join(dir, "real/f.txt"), key: filepath.Join(dir, "real/f.txt")},
		{name: "absolute path ignores cwd", path: filepath.Join(dir, "real/f.txt"), cwd: "/nowhere", display: filepath.Join(dir, "real/f.txt"), key: filepath.Join(dir, "real/f.txt")},
		{name: "symlink alias keeps its display path and shares the key", path: "link/f.txt", display: filepath.Join(dir, "link/f.txt"), key: filepath.Join(dir, "real/f.txt")},
		{name: "missing file keys on realpath of parent plus name", path: "link/new.txt", display: filepath.Join(dir, "link/new.txt"), key: filepath.Join(dir, "real/new.txt")},
		{name: "missing intermediate directories are kept as suffix", path: "link/a/b/c.txt", display: filepath.Join(dir, "link/a/b/c.txt"), key: filepath.Join(dir, "real/a/b/c.txt")},
		{name: "dot-dot segments are resolved lexically", path: "real/../link/f.txt", display: filepath.Join(dir, "link/f.txt"), key: filepath.Join(dir, "real/f.txt")},
		{name: "blank path is not found", path: "  ", wantCode: CodeNotFound, wantMsg: "file_path must be a non-empty string"},
		{name: "file used as a directory is not found", path: "real/f.txt/x", wantCode: CodeNotFound, wantMsg: `cannot resolve "` + filepath.Join(dir, "real/f.txt/x") + `": a parent path segment is not a directory`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tg, err := l.Resolve(c.path, c.cwd)
			if c.wantCode != "" {
				wantCode(t, err, c.wantCode, c.wantMsg)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tg.Display != c.display || tg.Key != c.key {
				t.Fatalf("Resolve = %+v, want display %s key %s", tg, c.display, c.key)
			}
		})
	}
	t.Run("key is stable across creation under a symlinked ancestor", func(t *testing.T) {
		before := resolve(t, l, "link/later.txt")
		harness.MustWrite(t, filepath.Join(dir, "real/later.txt"), "now")
		after := resolve(t, l, "link/later.txt")
		if before.Key != after.Key {
			t.Fatalf("key changed: %s -> %s", before.Key, after.Key)
		}
	})
}

func TestVersion(t *testing.T) {
	_, l, p := localWithFile(t, "f.txt", "same")
	tg := resolve(t, l, p)
	v1 := version(t, l, tg)
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(v1, ":")
	if len(parts) != 5 || parts[1] != strconv.FormatUint(st.Ino, 10) || parts[2] != "4" {
		t.Fatalf("version %q does not carry dev:ino:size:mtimeNs:ctimeNs of %+v", v1, st)
	}
	t.Run("same-size rewrite with mtime restored changes version", func(t *testing.T) {
		mtime := time.Unix(st.Mtim.Sec, st.Mtim.Nsec)
		if _, err := l.WriteText(context.Background(), tg, "SAME", WriteIntent{}); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		if v2 := version(t, l, tg); v2 == v1 {
			t.Fatalf("version unchanged after rewrite: %s", v2)
		}
	})
	t.Run("absent target does not exist", func(t *testing.T) {
		if _, ok, err := l.Stat(resolve(t, l, "missing")); ok || err != nil {
			t.Fatalf("missing target: exists=%v err=%v", ok, err)
		}
	})
}

func TestDiffBasisMaxBytesValidation(t *testing.T) {
	l, err := NewLocal()
	if err != nil {
		t.Fatal(err)
	}
	if l.DiffBasisMaxBytes() != 10<<20 {
		t.Fatalf("default diffBasisMaxBytes = %d", l.DiffBasisMaxBytes())
	}
	for _, v := range []float64{0, -1, 1.5, 1 << 54} {
		if err := ValidateDiffBasisMaxBytes(v); err == nil || !strings.HasPrefix(err.Error(), "fs-local: diffBasisMaxBytes must be a positive safe integer (got ") {
			t.Errorf("ValidateDiffBasisMaxBytes(%v) = %v", v, err)
		}
	}
	if _, err := NewLocal(WithDiffBasisMaxBytes(0)); err == nil {
		t.Error("NewLocal accepted diffBasisMaxBytes 0")
	}
	if _, err := NewLocal(WithCwd("relative")); err == nil {
		t.Error("NewLocal accepted a relative cwd")
	}
}

func TestWriteText(t *testing.T) {
	ctx := context.Background()
	type env struct {
		dir string
		l   *Local
		tg  Target
		p   string
	}
	type writeCase struct {
		name    string
		setup   func(t *testing.T, e *env) WriteIntent
		content string
		code    string
		msg     string // %s = display path
		check   func(t *testing.T, e *env, r WriteResult)
	}
	// noBasis: writing content over a file holding prior keeps no diff basis.
	noBasis := func(name, prior, content string) writeCase {
		return writeCase{
			name:    name,
			setup:   func(t *testing.T, e *env) WriteIntent { harness.MustWrite(t, e.p, prior); return WriteIntent{} },
			content: content,
			check:   func(t *testing.T, e *env, r WriteResult) { wantNoBasis(t, r) },
		}
	}
	cases := []writeCase{
		{
			name:    "createIfAbsent creates a private file",
			setup:   func(t *testing.T, e *env) WriteIntent { return WriteIntent{Kind: CreateIfAbsent} },
			content: "hello\r\nworld",
			check: func(t *testing.T, e *env, r WriteResult) {
				fi, _ := os.Stat(e.p)
				if mustRead(t, e.p) != "hello\r\nworld" || fi.Mode().Perm() != 0o600 || r.Operation != "create" || r.Before != nil || r.After != "hello\nworld" {
					t.Fatalf("create: %q mode %v result %+v", mustRead(t, e.p), fi.Mode(), r)
				}
			},
		},
		{
			name: "createIfAbsent on an existing file is not observed and leaves it",
			setup: func(t *testing.T, e *env) WriteIntent {
				harness.MustWrite(t, e.p, "old")
				return WriteIntent{Kind: CreateIfAbsent}
			},
			code: CodeNotObserved, msg: `cannot overwrite existing "%s" without reading it first`,
			check: func(t *testing.T, e *env, _ WriteResult) { wantContent(t, e.p, "old") },
		},
		{
			name: "createIfAbsent loses to a competitor created mid-write",
			setup: func(t *testing.T, e *env) WriteIntent {
				e.l.beforePublish = func(_, key string) { harness.MustWrite(t, key, "competitor") }
				return WriteIntent{Kind: CreateIfAbsent}
			},
			content: "mine", code: CodeNotObserved, msg: `cannot overwrite existing "%s" without reading it first`,
			check: func(t *testing.T, e *env, _ WriteResult) { wantContent(t, e.p, "competitor") },
		},
		{
			name: "a competing directory is not a regular file",
			setup: func(t *testing.T, e *env) WriteIntent {
				e.l.beforePublish = func(_, key string) { os.Mkdir(key, 0o755) }
				return WriteIntent{Kind: CreateIfAbsent}
			},
			content: "mine", code: CodeNotRegularFile, msg: `cannot write "%s": not a regular file`,
		},
		{
			name: "a dangling symlink is not a regular file and is preserved",
			setup: func(t *testing.T, e *env) WriteIntent {
				if err := os.Symlink(filepath.Join(e.dir, "nowhere"), e.p); err != nil {
					t.Fatal(err)
				}
				e.tg = resolve(t, e.l, e.p)
				return WriteIntent{Kind: CreateIfAbsent}
			},
			content: "mine", code: CodeNotRegularFile, msg: `cannot write "%s": not a regular file`,
			check: func(t *testing.T, e *env, _ WriteResult) {
				if dst, err := os.Readlink(e.p); err != nil || dst != filepath.Join(e.dir, "nowhere") {
					t.Fatalf("link changed: %q %v", dst, err)
				}
				if _, err := os.Lstat(filepath.Join(e.dir, "nowhere")); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("link target created: %v", err)
				}
			},
		},
		{
			name: "replaceIfVersion at the current version updates and keeps the mode",
			setup: func(t *testing.T, e *env) WriteIntent {
				harness.MustWrite(t, e.p, "o\r\nt\n")
				os.Chmod(e.p, 0o640)
				return WriteIntent{Kind: ReplaceIfVersion, Version: version(t, e.l, e.tg)}
			},
			content: "n\r\nt\n",
			check: func(t *testing.T, e *env, r WriteResult) {
				fi, _ := os.Stat(e.p)
				if r.Operation != "update" || r.Before == nil || *r.Before != "o\nt\n" || r.After != "n\nt\n" || fi.Mode().Perm() != 0o640 {
					t.Fatalf("update: %+v mode %v", r, fi.Mode())
				}
				if r.Version != version(t, e.l, e.tg) {
					t.Fatalf("returned version %s is not the fresh stat %s", r.Version, version(t, e.l, e.tg))
				}
				wantContent(t, e.p, "n\r\nt\n")
			},
		},
		{
			name: "replaceIfVersion of a changed file is stale and leaves it",
			setup: func(t *testing.T, e *env) WriteIntent {
				harness.MustWrite(t, e.p, "v1")
				v := version(t, e.l, e.tg)
				harness.MustWrite(t, e.p, "user's v2")
				return WriteIntent{Kind: ReplaceIfVersion, Version: v}
			},
			content: "mine", code: CodeStaleVersion, msg: `cannot write "%s": file changed since it was read`,
			check: func(t *testing.T, e *env, _ WriteResult) { wantContent(t, e.p, "user's v2") },
		},
		{
			name: "replaceIfVersion of a deleted file is stale and does not recreate it",
			setup: func(t *testing.T, e *env) WriteIntent {
				harness.MustWrite(t, e.p, "v1")
				v := version(t, e.l, e.tg)
				os.Remove(e.p)
				return WriteIntent{Kind: ReplaceIfVersion, Version: v}
			},
			content: "mine", code: CodeStaleVersion, msg: `cannot write "%s": file no longer exists`,
			check: func(t *testing.T, e *env, _ WriteResult) {
				if _, err := os.Stat(e.p); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("file recreated: %v", err)
				}
			},
		},
		{
			name:  "guarded write onto a directory is not a regular file",
			setup: func(t *testing.T, e *env) WriteIntent { os.Mkdir(e.p, 0o755); return WriteIntent{Kind: CreateIfAbsent} },
			code:  CodeNotRegularFile, msg: `cannot write "%s": not a regular file`,
		},
		{
			name:  "unguarded write onto a directory is not a regular file",
			setup: func(t *testing.T, e *env) WriteIntent { os.Mkdir(e.p, 0o755); return WriteIntent{} },
			code:  CodeNotRegularFile, msg: `cannot write "%s": not a regular file`,
		},
		{
			name:    "unguarded create",
			setup:   func(t *testing.T, e *env) WriteIntent { return WriteIntent{} },
			content: "new",
			check:   func(t *testing.T, e *env, r WriteResult) { wantContent(t, e.p, "new") },
		},
		{
			name:    "unguarded overwrite",
			setup:   func(t *testing.T, e *env) WriteIntent { harness.MustWrite(t, e.p, "old"); return WriteIntent{} },
			content: "new",
			check: func(t *testing.T, e *env, r WriteResult) {
				wantContent(t, e.p, "new")
				if r.Operation != "update" || r.Before == nil || *r.Before != "old" {
					t.Fatalf("result %+v", r)
				}
			},
		},
		{
			name:    "the diff basis drops the prior's byte-order mark, the content is written as given",
			setup:   func(t *testing.T, e *env) WriteIntent { harness.MustWrite(t, e.p, "\ufeffold"); return WriteIntent{} },
			content: "\ufeffnew",
			check: func(t *testing.T, e *env, r WriteResult) {
				wantContent(t, e.p, "\ufeffnew")
				if r.Before == nil || *r.Before != "old" || r.After != "\ufeffnew" {
					t.Fatalf("result %+v", r)
				}
			},
		},
		noBasis("binary prior has no diff basis", "a\x00b", "text"),
		noBasis("invalid UTF-8 prior has no diff basis", "a\xffb", "text"),
		noBasis("prior at the bound has no diff basis", "12345678", "x"),
		noBasis("new content at the bound (in UTF-8 bytes) has no diff basis", "x", "éééé"), // 4 characters, 8 bytes
		{
			name:    "both below the bound keep the basis",
			setup:   func(t *testing.T, e *env) WriteIntent { harness.MustWrite(t, e.p, "1234567"); return WriteIntent{} },
			content: "ééé",
			check: func(t *testing.T, e *env, r WriteResult) {
				if r.Before == nil || *r.Before != "1234567" {
					t.Fatalf("basis = %v", r.Before)
				}
			},
		},
		{
			name: "write creates missing parent directories",
			setup: func(t *testing.T, e *env) WriteIntent {
				e.p = filepath.Join(e.dir, "a/b/f.txt")
				e.tg = resolve(t, e.l, e.p)
				return WriteIntent{Kind: CreateIfAbsent}
			},
			content: "deep",
			check:   func(t *testing.T, e *env, r WriteResult) { wantContent(t, e.p, "deep") },
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := realTemp(t)
			e := &env{dir: dir, l: newLocal(t, dir, WithDiffBasisMaxBytes(8)), p: filepath.Join(dir, "f.txt")}
			e.tg = resolve(t, e.l, e.p)
			intent := c.setup(t, e)
			r, err := e.l.WriteText(ctx, e.tg, c.content, intent)
			if c.code != "" {
				wantCode(t, err, c.code, strings.ReplaceAll(c.msg, "%s", e.tg.Display))
			} else if err != nil {
				t.Fatal(err)
			}
			if c.check != nil {
				c.check(t, e, r)
			}
			if n := e.l.HeldLocks(); n != 0 {
				t.Fatalf("%d lock entries left", n)
			}
			assertNoStaging(t, dir)
		})
	}
}

func wantContent(t *testing.T, p, want string) {
	t.Helper()
	if got := mustRead(t, p); got != want {
		t.Fatalf("%s holds %q, want %q", p, got, want)
	}
}

func wantNoBasis(t *testing.T, r WriteResult) {
	t.Helper()
	if r.Before != nil {
		t.Fatalf("diff basis %q, want none", *r.Before)
	}
}

func assertNoStaging(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(d.Name(), ".tmpdir") {
			t.Errorf("staging residue %s", p)
		}
		return nil
	})
}

func TestEditText(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		initial string // "" = no file
		edit    Edit
		guard   func(v string) *EditGuard
		mutate  func(t *testing.T, p string)
		code    string
		msg     string
		disk    string // expected file content afterwards
		before  string
		after   string
	}{
		{name: "edit at the matching version applies", initial: "a\nb\nc\n", edit: Edit{Old: "b", New: "B"}, guard: at, disk: "a\nB\nc\n", before: "a\nb\nc\n", after: "a\nB\nc\n"},
		{name: "CRLF file stays CRLF on disk, texts are LF", initial: "a\r\nb\r\n", edit: Edit{Old: "a\r\nb", New: "x\ny"}, guard: at, disk: "x\r\ny\r\n", before: "a\nb\n", after: "x\ny\n"},
		{name: "a leading byte-order mark is not text and is not written back", initial: "\ufeffa\r\nb\r\n", edit: Edit{Old: "b", New: "B"}, guard: at, disk: "a\r\nB\r\n", before: "a\nb\n", after: "a\nB\n"},
		{name: "old_string with the leading byte-order mark does not match", initial: "\ufeffa", edit: Edit{Old: "\ufeffa", New: "b"}, code: CodeEditNotFound, msg: `old_string was not found in "%s"`, disk: "\ufeffa"},
		{name: "stale is checked before the literal match", initial: "a", edit: Edit{Old: "zzz", New: "y"}, guard: at, mutate: func(t *testing.T, p string) { harness.MustWrite(t, p, "b") }, code: CodeStaleVersion, msg: `cannot edit "%s": file changed since it was read`, disk: "b"},
		{name: "unguarded edit applies", initial: "a", edit: Edit{Old: "a", New: "b"}, disk: "b", before: "a", after: "b"},
		{name: "missing target is stale even unguarded", edit: Edit{Old: "a", New: "b"}, code: CodeStaleVersion, msg: `cannot edit "%s": file changed since it was read`},
		{name: "deleted target is stale", initial: "a", edit: Edit{Old: "a", New: "b"}, guard: at, mutate: func(t *testing.T, p string) { os.Remove(p) }, code: CodeStaleVersion, msg: `cannot edit "%s": file changed since it was read`},
		{name: "zero matches is edit-not-found", initial: "abc", edit: Edit{Old: "x", New: "y"}, code: CodeEditNotFound, msg: `old_string was not found in "%s"`, disk: "abc"},
		{name: "empty old string is edit-not-found", initial: "abc", edit: Edit{Old: "", New: "y"}, code: CodeEditNotFound, msg: `old_string must be a non-empty string`, disk: "abc"},
		{name: "multiple matches are ambiguous", initial: "a a a", edit: Edit{Old: "a", New: "b"}, code: CodeAmbiguousEdit, msg: `old_string matched 3 times in "%s"; provide a more specific old_string or set replace_all to true`, disk: "a a a"},
		{name: "replace all replaces every match", initial: "a a a", edit: Edit{Old: "a", New: "b", ReplaceAll: true}, disk: "b b b", before: "a a a", after: "b b b"},
		{name: "invalid UTF-8 is not text and bytes are unchanged", initial: "a\xff", edit: Edit{Old: "a", New: "b"}, code: CodeNotText, msg: `cannot edit "%s": invalid UTF-8 text`, disk: "a\xff"},
		{name: "a NUL byte is binary", initial: "a\x00", edit: Edit{Old: "a", New: "b"}, code: CodeNotText, msg: `cannot edit "%s": binary file`, disk: "a\x00"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := realTemp(t)
			l := newLocal(t, dir)
			p := filepath.Join(dir, "f.txt")
			if c.initial != "" {
				harness.MustWrite(t, p, c.initial)
			}
			tg := resolve(t, l, p)
			var g *EditGuard
			if c.guard != nil {
				g = c.guard(version(t, l, tg))
			}
			if c.mutate != nil {
				c.mutate(t, p)
			}
			r, err := l.EditText(ctx, tg, c.edit, g)
			if c.code != "" {
				wantCode(t, err, c.code, strings.ReplaceAll(c.msg, "%s", tg.Display))
			} else if err != nil {
				t.Fatal(err)
			} else if r.Before != c.before || r.After != c.after {
				t.Fatalf("edit result before %q after %q, want %q %q", r.Before, r.After, c.before, c.after)
			}
			if c.disk != "" {
				wantContent(t, p, c.disk)
			}
			if l.HeldLocks() != 0 {
				t.Fatal("lock entries left")
			}
			assertNoStaging(t, dir)
		})
	}
	t.Run("directory target is not a regular file", func(t *testing.T) {
		dir := realTemp(t)
		l := newLocal(t, dir)
		os.Mkdir(filepath.Join(dir, "d"), 0o755)
		tg := resolve(t, l, "d")
		_, err := l.EditText(ctx, tg, Edit{Old: "a", New: "b"}, nil)
		wantCode(t, err, CodeNotRegularFile, `cannot edit "`+tg.Display+`": not a regular file`)
	})
	t.Run("the returned version guards the next edit", func(t *testing.T) {
		_, l, p := localWithFile(t, "f", "one")
		tg := resolve(t, l, "f")
		r, err := l.EditText(ctx, tg, Edit{Old: "one", New: "two"}, &EditGuard{Version: version(t, l, tg)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.EditText(ctx, tg, Edit{Old: "two", New: "three"}, &EditGuard{Version: r.Version}); err != nil {
			t.Fatal(err)
		}
		wantContent(t, p, "three")
	})
	t.Run("edit via a symlink alias writes the real file and keeps the link", func(t *testing.T) {
		dir := realTemp(t)
		l := newLocal(t, dir)
		harness.MustWrite(t, filepath.Join(dir, "real"), "one")
		os.Symlink("real", filepath.Join(dir, "alias"))
		viaLink, real := resolve(t, l, "alias"), resolve(t, l, "real")
		if viaLink.Key != real.Key || version(t, l, viaLink) != version(t, l, real) {
			t.Fatal("aliases do not share key and version")
		}
		if _, err := l.EditText(ctx, viaLink, Edit{Old: "one", New: "two"}, &EditGuard{Version: version(t, l, real)}); err != nil {
			t.Fatal(err)
		}
		wantContent(t, filepath.Join(dir, "real"), "two")
		if fi, err := os.Lstat(filepath.Join(dir, "alias")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("alias is no longer a symlink: %v", err)
		}
		_, err := l.EditText(ctx, real, Edit{Old: "two", New: "x"}, &EditGuard{Version: "stale"})
		wantCode(t, err, CodeStaleVersion, "")
	})
}

func at(v string) *EditGuard { return &EditGuard{Version: v} }

func TestAbortedBeforeStart(t *testing.T) {
	dir, l, p := localWithFile(t, "f", "keep")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := l.WriteText(ctx, resolve(t, l, "new"), "x", WriteIntent{Kind: CreateIfAbsent})
	wantCode(t, err, CodeAborted, "write aborted")
	_, err = l.EditText(ctx, resolve(t, l, "f"), Edit{Old: "keep", New: "x"}, nil)
	wantCode(t, err, CodeAborted, "write aborted")
	wantContent(t, p, "keep")
	noResidue(t, dir, "f")
	if l.HeldLocks() != 0 {
		t.Fatal("lock entries left")
	}
}

// TestDirectoryFlock proves the cross-process advisory lock is real: while
// another open file description holds flock(2) on the directory, no write
// happens; once it is released the write goes through.
func TestDirectoryFlock(t *testing.T) {
	dir, l, p := localWithFile(t, "f", "old")
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = l.WriteText(ctx, resolve(t, l, "f"), "new", WriteIntent{})
	wantCode(t, err, CodeAborted, "write aborted")
	wantContent(t, p, "old")
	if err := unix.Flock(fd, unix.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if _, err := l.WriteText(context.Background(), resolve(t, l, "f"), "new", WriteIntent{}); err != nil {
		t.Fatal(err)
	}
	wantContent(t, p, "new")
}

func TestConcurrentGuardedMutations(t *testing.T) {
	dir, l, p := localWithFile(t, "f", "base")
	tg := resolve(t, l, "f")
	v := version(t, l, tg)
	const n = 20
	var wg sync.WaitGroup
	errs := make([]error, n)
	contents := make([]string, n)
	start := make(chan struct{})
	for i := range n {
		contents[i] = strings.Repeat(string(rune('a'+i)), 4096)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if i%2 == 0 {
				_, errs[i] = l.WriteText(context.Background(), tg, contents[i], WriteIntent{Kind: ReplaceIfVersion, Version: v})
			} else {
				_, errs[i] = l.EditText(context.Background(), tg, Edit{Old: "base", New: contents[i]}, &EditGuard{Version: v})
			}
		}()
	}
	close(start)
	wg.Wait()
	winners := 0
	final := mustRead(t, p)
	for i, err := range errs {
		if err == nil {
			winners++
			if final != contents[i] {
				t.Fatalf("winner %d wrote %d bytes but file holds %d bytes", i, len(contents[i]), len(final))
			}
			continue
		}
		wantCode(t, err, CodeStaleVersion, "")
	}
	if winners != 1 {
		t.Fatalf("%d winners, want exactly 1", winners)
	}
	if l.HeldLocks() != 0 {
		t.Fatal("lock entries left")
	}
	noResidue(t, dir, "f")
}

func TestScanLines(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		max   int
		lines []Line
		code  string
	}{
		{name: "empty file has no lines", in: ""},
		{name: "single newline is one empty line", in: "\n", max: 10, lines: []Line{{Text: ""}}},
		{name: "trailing newline adds no line", in: "a\nb\n", max: 10, lines: []Line{{Text: "a"}, {Text: "b"}}},
		{name: "final line without newline counts", in: "a\nb", max: 10, lines: []Line{{Text: "a"}, {Text: "b"}}},
		{name: "one trailing CR is stripped", in: "a\r\r\nb\r\n", max: 10, lines: []Line{{Text: "a\r"}, {Text: "b"}}},
		{name: "long line keeps cap plus one units", in: "abcdefgh\n", max: 3, lines: []Line{{Text: "abcd", Over: true}}},
		{name: "astral characters count two units", in: "😀😀😀\n", max: 3, lines: []Line{{Text: "😀😀", Over: true}}},
		{name: "NUL in the first 8192 bytes is binary", in: "a\x00", code: CodeNotText},
		{name: "NUL after 8192 bytes is text", in: strings.Repeat("a", 8192) + "\x00", max: 1, lines: []Line{{Text: "aa", Over: true}}},
		{name: "invalid UTF-8 is refused", in: "ok\n\xff", max: 10, code: CodeNotText},
		{name: "incomplete sequence inside a line is refused", in: "a\xe2\x82b\n", max: 10, code: CodeNotText},
		{name: "multibyte runes straddling chunks are kept whole", in: "é€😀\n", max: 10, lines: []Line{{Text: "é€😀"}}},
		{name: "truncated UTF-8 at EOF is refused", in: "ok\n\xe2\x82", max: 10, code: CodeNotText},
		{name: "one leading byte-order mark is dropped", in: "\ufeffbom\nx\n", max: 10, lines: []Line{{Text: "bom"}, {Text: "x"}}},
		{name: "a file that is only a byte-order mark has no lines", in: "\ufeff", max: 10},
		{name: "a second byte-order mark is text", in: "\ufeff\ufeffx", max: 10, lines: []Line{{Text: "\ufeffx"}}},
		{name: "a byte-order mark later in the file is text", in: "a\n\ufeffb\n", max: 10, lines: []Line{{Text: "a"}, {Text: "\ufeffb"}}},
		{name: "a NUL right after a byte-order mark is binary", in: "\ufeff\x00", max: 10, code: CodeNotText},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []Line
			err := ScanLines(context.Background(), &chunky{s: c.in}, "/d", c.max, func(l Line) { got = append(got, l) })
			if c.code != "" {
				wantCode(t, err, c.code, "")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(c.lines) {
				t.Fatalf("lines %+v, want %+v", got, c.lines)
			}
			for i := range got {
				if got[i] != c.lines[i] {
					t.Fatalf("line %d = %+v, want %+v", i, got[i], c.lines[i])
				}
			}
		})
	}
}

// chunky reads three bytes at a time, so sequences straddle chunk ends.
type chunky struct{ s string }

func (c *chunky) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 3)], c.s)
	c.s = c.s[n:]
	return n, nil
}

// TestSymlinkSwapAfterResolve: a directory of the resolved key is replaced by
// a symlink to another place before the write; the write is refused and
// nothing lands at the symlink's target.
func TestSymlinkSwapAfterResolve(t *testing.T) {
	dir := realTemp(t)
	elsewhere := realTemp(t)
	l := newLocal(t, dir)
	harness.MustWrite(t, filepath.Join(dir, "sub", "f.txt"), "old")
	fresh := resolve(t, l, "sub/new.txt")
	if err := os.Rename(filepath.Join(dir, "sub"), filepath.Join(dir, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		do   func() error
	}{
		{"unguarded overwrite", func() error { _, err := l.WriteText(context.Background(), fresh, "x", WriteIntent{}); return err }},
		{"guarded create", func() error {
			_, err := l.WriteText(context.Background(), fresh, "x", WriteIntent{Kind: CreateIfAbsent})
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.do()
			wantCode(t, err, CodeIOError, `cannot write "`+fresh.Display+`": a directory of the path changed into a symlink`)
			noResidue(t, elsewhere)
		})
	}
}

// TestFailureKeepsOldContent: a publication that fails (the temp file is
// gone) or a cancellation after staging leaves the old file whole and no
// staging directory behind.
func TestFailureKeepsOldContent(t *testing.T) {
	cases := []struct {
		name   string
		hook   func(cancel context.CancelFunc) func(tmp, key string)
		create bool
		code   string
	}{
		{"rename failure", func(context.CancelFunc) func(string, string) { return func(tmp, _ string) { os.Remove(tmp) } }, false, CodeNotFound},
		{"link failure", func(context.CancelFunc) func(string, string) { return func(tmp, _ string) { os.Remove(tmp) } }, true, CodeNotFound},
		{"cancelled after staging", func(cancel context.CancelFunc) func(string, string) { return func(string, string) { cancel() } }, false, CodeAborted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := realTemp(t)
			l := newLocal(t, dir)
			p := filepath.Join(dir, "f")
			if !c.create {
				harness.MustWrite(t, p, "precious")
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			l.beforePublish = c.hook(cancel)
			intent := WriteIntent{}
			if c.create {
				intent.Kind = CreateIfAbsent
			}
			_, err := l.WriteText(ctx, resolve(t, l, "f"), "new", intent)
			wantCode(t, err, c.code, "")
			if c.create {
				noResidue(t, dir)
			} else {
				wantContent(t, p, "precious")
				noResidue(t, dir, "f")
			}
			if l.HeldLocks() != 0 {
				t.Fatal("lock entries left")
			}
		})
	}
}

// TestOpenRefusesAFIFOWithoutBlocking: a FIFO at a read or edit target (for
// example swapped in after the stat by a writer that ignores our lock) is
// refused at once as not a regular file; before, the open waited for a writer
// forever, holding the target's lock.
func TestOpenRefusesAFIFOWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := NewLocal(WithCwd(dir))
	if err != nil {
		t.Fatal(err)
	}
	tg, err := l.Resolve("pipe", dir)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		f, err := l.Open(tg)
		if f != nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !pipeline.HasCode(err, CodeNotRegularFile) {
			t.Errorf("Open(fifo) = %v, want FS_NOT_REGULAR_FILE", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Open of a FIFO blocked")
	}
	f, info, err := openNoBlock(fifo)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if info.Kind == KindFile {
		t.Errorf("openNoBlock reports a FIFO as a regular file")
	}
}

// TestEditRefusesAFileSwappedAfterTheVersionCheck: a writer that ignores our
// lock renames another file over the target between the edit's version check
// and its open; the edit must notice (the opened file is not the version it
// checked) and refuse as stale, leaving the swapped-in file untouched, even
// though that file holds the text the edit looks for.
func TestEditRefusesAFileSwappedAfterTheVersionCheck(t *testing.T) {
	dir, l, p := localWithFile(t, "f", "hello world\n")
	tg := resolve(t, l, "f")
	info, ok, err := l.Stat(tg)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	l.beforeOpen = func(key string) {
		other := filepath.Join(dir, "other")
		harness.MustWrite(t, other, "hello world\n") // same text and size, another inode
		if err := os.Rename(other, key); err != nil {
			t.Fatal(err)
		}
	}
	_, err = l.EditText(context.Background(), tg, Edit{Old: "hello", New: "bye"}, &EditGuard{Version: info.Version})
	wantCode(t, err, CodeStaleVersion, `cannot edit "`+tg.Display+`": file changed since it was read`)
	wantContent(t, p, "hello world\n")
	if l.HeldLocks() != 0 {
		t.Fatal("lock entries left")
	}
}

// changeCtimeOnly changes p's ctime and nothing else the version holds: it
// flips the mode back and forth (the mode is not part of the version) until
// the kernel's coarse clock has moved on, under a deadline.
func changeCtimeOnly(t *testing.T, p string) {
	t.Helper()
	var before, after unix.Stat_t
	if err := unix.Stat(p, &before); err != nil {
		t.Fatal(err)
	}
	perm := uint32(before.Mode & 0o7777)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := unix.Chmod(p, perm^0o001); err != nil {
			t.Fatal(err)
		}
		if err := unix.Chmod(p, perm); err != nil {
			t.Fatal(err)
		}
		if err := unix.Stat(p, &after); err != nil {
			t.Fatal(err)
		}
		if after.Ctim != before.Ctim {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ctime of %s did not change within 10s", p)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if after.Ino != before.Ino || after.Size != before.Size || after.Mtim != before.Mtim || after.Mode != before.Mode {
		t.Fatalf("more than the ctime of %s changed", p)
	}
}

// TestStaleWriteAfterAnOutsideChange: a file read, then changed by someone
// else (its ctime alone: mode flipped and restored, content, size and mtime
// as read; or emptied) has another version; a write guarded by the version
// read is stale and leaves the file as the change left it.
func TestStaleWriteAfterAnOutsideChange(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(t *testing.T, p string)
		left   string
	}{
		{"ctime alone", changeCtimeOnly, "v1"},
		{"emptied", func(t *testing.T, p string) {
			if err := os.Truncate(p, 0); err != nil {
				t.Fatal(err)
			}
		}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			l := newLocal(t, dir)
			p := filepath.Join(dir, "f.txt")
			harness.MustWrite(t, p, "v1")
			tg := resolve(t, l, p)
			v := version(t, l, tg)
			c.change(t, p)
			if got := version(t, l, tg); got == v {
				t.Fatalf("version %s unchanged after the change", got)
			}
			_, err := l.WriteText(context.Background(), tg, "mine", WriteIntent{Kind: ReplaceIfVersion, Version: v})
			wantCode(t, err, CodeStaleVersion, fmt.Sprintf(`cannot write "%s": file changed since it was read`, tg.Display))
			wantContent(t, p, c.left)
		})
	}
}
