package diff

import (
	"strings"

	"github.com/dshsim/dshsim/harness/oracle"
)

func callOf(name string, args any) oracle.Call { return oracle.Call{Name: name, Args: raw(args)} }

func stepOf(calls ...oracle.Call) oracle.Step { return oracle.Step{Calls: calls} }

// texts are seed file contents with edges: line endings, no final newline,
// a byte-order mark, long and many lines, control characters.
var texts = []string{
	"one\ntwo\nthree\n",
	"no final newline",
	"",
	"\n",
	"crlf one\r\ncrlf two\r\n",
	"mixed\r\nendings\nhere\r",
	"\ufeffbom first\nbom second\n",
	"\ufeffbom crlf\r\nsecond\r\n",
	"\ufeff",
	"tab\there\x00nul\n",
	"ü multi € byte 😀\n",
	strings.Repeat("x", 2100) + "\n",
	strings.Repeat("row\n", 2100),
	"a $& b $1 c $$ d\n",
	"dup dup dup\n",
}

// offsets and limits a read may get.
var windows = []any{nil, 0, 1, 2, -1, 1.5, "2", 9999, 2000, 2001}

// moveRead reads a seeded (or new) file, sometimes through a window.
func moveRead(g *gen) {
	name := pick(g, g.readable...)
	if g.chance(0.5) {
		name = g.file(pick(g, "r1.txt", "r2.txt", "dir/r3.txt"), pick(g, texts...))
	}
	args := o("file_path", name)
	if v := pick(g, windows...); v != nil {
		args = append(args, kv{"offset", v})
	}
	if v := pick(g, windows...); v != nil {
		args = append(args, kv{"limit", v})
	}
	g.call("read", args, AreaRead)
	if strings.HasPrefix(g.ws[name], "\ufeff") {
		g.mark(AreaBOM)
	}
}

// moveWrite writes a new file, or an existing one after reading it.
func moveWrite(g *gen) {
	content := pick(g, texts...)
	switch g.r.IntN(3) {
	case 0:
		g.call("write", o("file_path", pick(g, "new.txt", "deep/er/new.txt", "sub/new.txt"), "content", content), AreaWrite)
	case 1:
		name := pick(g, g.readable...)
		g.call("read", o("file_path", name), AreaRead)
		g.call("write", o("file_path", name, "content", content), AreaWrite)
	default:
		g.call("write", o("file_path", pick(g, g.readable...), "content", content), AreaWrite, AreaFSFailure)
	}
	if strings.HasPrefix(content, "\ufeff") {
		g.mark(AreaBOM)
	}
}

// moveEdit edits after a read: found once, ambiguous, replace_all, missing,
// empty or identical strings, JavaScript replacement patterns.
func moveEdit(g *gen) {
	name := g.file(pick(g, "e1.txt", "e2.txt"), pick(g, texts...))
	g.call("read", o("file_path", name), AreaRead)
	content := g.ws[name]
	old := pick(g, "two", "dup", "crlf one\ncrlf two", "bom first", "\ufeffbom", "absent", "", "x", "$&", "o")
	if fields := strings.Fields(content); len(fields) > 0 && g.chance(0.4) {
		old = pick(g, fields...)
	}
	args := o("file_path", name, "old_string", old, "new_string", pick(g, "NEW", "", "$&$&", "$1", "line\r\nbreak", old))
	if g.chance(0.3) {
		args = append(args, kv{"replace_all", pick[any](g, true, false, "yes")})
	}
	g.call("edit", args, AreaEdit)
	if strings.HasPrefix(content, "\ufeff") || strings.Contains(old, "\ufeff") {
		g.mark(AreaBOM)
	}
}

// moveFSFailure: the file tools' refusals.
func moveFSFailure(g *gen) {
	variants := []struct {
		name string
		args obj
	}{
		{"read", o("file_path", "missing.txt")},
		{"read", o("file_path", "sub")},
		{"read", o()},
		{"read", o("file_path", "")},
		{"read", o("file_path", 5)},
		{"write", o("file_path", "sub", "content", "x")},
		{"write", o("file_path", "a.txt/child", "content", "x")},
		{"write", o("file_path", "w.txt")},
		{"write", o("file_path", "w.txt", "content", 5)},
		{"edit", o("file_path", "missing.txt", "old_string", "a", "new_string", "b")},
		{"edit", o("file_path", "a.txt", "old_string", "alpha", "new_string", "ALPHA")},
		{"edit", o("file_path", "a.txt", "old_string", "alpha")},
		{"edit", o("file_path", "sub", "old_string", "a", "new_string", "b")},
	}
	v := pick(g, variants...)
	g.call(v.name, v.args, AreaFSFailure, map[string]string{"read": AreaRead, "write": AreaWrite, "edit": AreaEdit}[v.name])
}

// moveStale: read, change the file behind the tool's back, then edit or write.
func moveStale(g *gen) {
	name := g.file("s.txt", "stale one\nstale two\n")
	g.call("read", o("file_path", name), AreaRead)
	change := pick(g, "echo more >> s.txt", "rm s.txt", "touch -d '2001-01-01' s.txt", "printf 'stale one\\nstale two\\n' > s.txt")
	g.call("bash", o("command", change, "description", "Change behind the tool"), AreaBashForeground)
	if g.chance(0.5) {
		g.call("edit", o("file_path", name, "old_string", "stale one", "new_string", "fresh"), AreaEdit, AreaFSFailure)
	} else {
		g.call("write", o("file_path", name, "content", "rewritten\n"), AreaWrite, AreaFSFailure)
	}
}

// moveBOMRead reads a file that starts with a byte-order mark.
func moveBOMRead(g *gen) {
	name := g.file(pick(g, "bom.txt", "bom2.txt"), pick(g, "\ufeffbom first\nbom second\n", "\ufeffbom crlf\r\nsecond\r\n", "\ufeff", "\ufeffonly", "\ufeff\ufeffdouble\n"))
	args := o("file_path", name)
	if g.chance(0.3) {
		args = append(args, kv{"offset", pick[any](g, 1, 2)}, kv{"limit", 1})
	}
	g.call("read", args, AreaRead, AreaBOM)
}

// moveBOMEdit edits a file that starts with a byte-order mark.
func moveBOMEdit(g *gen) {
	name := g.file("bomedit.txt", pick(g, "\ufeffbom first\nbom second\n", "\ufeffbom crlf\r\nsecond\r\n", "\ufeffbom"))
	g.call("read", o("file_path", name), AreaRead, AreaBOM)
	old := pick(g, "bom first", "\ufeffbom", "bom", "second", "bom crlf\nsecond")
	args := o("file_path", name, "old_string", old, "new_string", pick(g, "EDITED", "\ufeffEDITED", ""))
	if g.chance(0.3) {
		args = append(args, kv{"replace_all", true})
	}
	g.call("edit", args, AreaEdit, AreaBOM)
	if g.chance(0.5) {
		g.call("bash", o("command", "od -c bomedit.txt | head -3", "description", "Bytes after the edit"), AreaBashForeground)
	}
}

// moveBOMWrite writes content with a byte-order mark, or over a file that has one.
func moveBOMWrite(g *gen) {
	if g.chance(0.5) {
		name := g.file("bomw.txt", "\ufeffold\n")
		g.call("read", o("file_path", name), AreaRead, AreaBOM)
		g.call("write", o("file_path", name, "content", pick(g, "new\n", "\ufeffnew\n")), AreaWrite, AreaBOM)
	} else {
		g.call("write", o("file_path", "bomnew.txt", "content", "\ufeffwritten\n"), AreaWrite, AreaBOM)
	}
	g.call("bash", o("command", "od -c bom*.txt | head -4", "description", "Bytes written"), AreaBashForeground)
}
