package fs

import (
	"strings"
	"testing"

	"github.com/dshsim/dshsim/fsobserve"
	"github.com/dshsim/dshsim/harness"
)

func withCaps(limit, lineLen, maxBytes int) rigOpt {
	return func(c *Config) { c.ReadLimit, c.ReadMaxLineLength, c.ReadMaxBytes = limit, lineLen, maxBytes }
}

// TestFormats pins every result format (text, isError, meta, error info) in
// a golden file per case: testdata/format-<name>.golden.
func TestFormats(t *testing.T) {
	ten := "line one\nline two\nline three\nline four\nline five\nline six\nline seven\nline eight\nline nine\nline ten\n"
	cases := []struct {
		name  string
		opts  []rigOpt
		files map[string]string
		calls []string // "tool {json}"; results are rendered in order
	}{
		{"read-eof", nil, map[string]string{"a.txt": "hello\nworld"}, []string{`read {"file_path":"a.txt"}`}},
		{"read-empty-file", nil, map[string]string{"empty.txt": ""}, []string{`read {"file_path":"empty.txt"}`}},
		{"read-window", nil, map[string]string{"ten.txt": ten}, []string{`read {"file_path":"ten.txt","offset":5,"limit":4}`}},
		{"read-byte-capped", []rigOpt{withCaps(2000, 2000, 9)}, map[string]string{"c.txt": "aaaa\nbbbb\ncccc\n"}, []string{`read {"file_path":"c.txt"}`}},
		{"read-line-truncated", []rigOpt{withCaps(2000, 5, 51200)}, map[string]string{"l.txt": "abcdefgh\nabc\n"}, []string{`read {"file_path":"l.txt"}`}},
		{"read-crlf-and-lang", nil, map[string]string{"main.GO": "package main\r\n\r\nfunc main() {}\r\n"}, []string{`read {"file_path":"main.GO"}`}},
		{"read-html-sensitive-text", nil, map[string]string{"x.md": "<b>&</b>\n"}, []string{`read {"file_path":"x.md"}`}},
		{"read-errors", nil, map[string]string{"a.txt": "a\nb\n", "dir/f": "x", "bin.dat": "\x00\x01", "bad.txt": "ok\xff"}, []string{
			`read {"file_path":"missing.txt"}`,
			`read {"file_path":"dir"}`,
			`read {"file_path":"bin.dat"}`,
			`read {"file_path":"bad.txt"}`,
			`read {"file_path":"a.txt","offset":5}`,
			`read {"file_path":"a.txt/x"}`,
		}},
		{"read-validation", nil, map[string]string{"a.txt": "a\n"}, []string{
			`read {"file_path":"  "}`,
			`read {"file_path":"a.txt","offset":0}`,
			`read {"file_path":"a.txt","offset":1.5}`,
			`read {"file_path":"a.txt","limit":0}`,
			`read {"file_path":"a.txt","limit":-3}`,
			`read {"file_path":"a.txt","limit":99999}`,
			`read {"file_path":"a.txt","offset":"2"}`,
			`read []`,
		}},
		{"write-create-then-update", nil, nil, []string{
			`write {"file_path":"notes.txt","content":"hello world"}`,
			`write {"file_path":"notes.txt","content":"hello there\nworld\n"}`,
			`write {"file_path":"notes.txt","content":"hello there\nworld\n"}`,
		}},
		{"write-overwrite-after-read", nil, map[string]string{"data.txt": "original contents"}, []string{
			`read {"file_path":"data.txt"}`,
			`write {"file_path":"data.txt","content":"replaced"}`,
		}},
		{"write-validation", nil, nil, []string{
			`write {"file_path":"","content":"x"}`,
			`write {"file_path":"a.txt"}`,
		}},
		{"edit-success-and-replace-all", nil, map[string]string{"config.txt": "mode=DEBUG\nlevel=info\nDEBUG=1\n"}, []string{
			`read {"file_path":"config.txt"}`,
			`edit {"file_path":"config.txt","old_string":"level=info","new_string":"level=warn"}`,
			`edit {"file_path":"config.txt","old_string":"DEBUG","new_string":"RELEASE","replace_all":true}`,
		}},
		{"edit-refusals", nil, map[string]string{"s.txt": "blue blue\n"}, []string{
			`edit {"file_path":"s.txt","old_string":"blue","new_string":"green"}`,
			`read {"file_path":"s.txt"}`,
			`edit {"file_path":"s.txt","old_string":"blue","new_string":"green"}`,
			`edit {"file_path":"s.txt","old_string":"red","new_string":"green"}`,
			`edit {"file_path":"s.txt","old_string":"blue","new_string":"blue"}`,
			`edit {"file_path":"s.txt","old_string":"","new_string":"x"}`,
			`edit {"file_path":" ","old_string":"a","new_string":"x"}`,
			`edit {"file_path":"s.txt","old_string":"a","new_string":"x","replace_all":"yes"}`,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, c.opts...)
			for name, content := range c.files {
				r.put(name, content)
			}
			var b strings.Builder
			for _, call := range c.calls {
				tool, args, _ := strings.Cut(call, " ")
				out, err := r.run(r.agent("A"), tool, args)
				b.WriteString("> " + call + "\n" + r.render(out, err) + "\n")
			}
			harness.Golden(t, "testdata", "format-"+c.name+".golden", []byte(b.String()))
		})
	}
}

func TestConfigCaps(t *testing.T) {
	r := newRig(t)
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"missing provider is refused", Config{}, "tool-fs: no filesystem provider (Config.FS is nil)"},
		{"negative readLimit is refused", Config{FS: r.fs, ReadLimit: -1}, "tool-fs: readLimit must be a positive integer"},
		{"negative readMaxLineLength is refused", Config{FS: r.fs, ReadMaxLineLength: -1}, "tool-fs: readMaxLineLength must be a positive integer"},
		{"negative readMaxBytes is refused", Config{FS: r.fs, ReadMaxBytes: -5}, "tool-fs: readMaxBytes must be a positive integer"},
		{"negative readStreamMinSize is refused", Config{FS: r.fs, ReadStreamMinSize: -5}, "tool-fs: readStreamMinSize must be a positive integer"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := build(c.cfg); err == nil || err.Error() != c.want {
				t.Fatalf("New error %v, want %q", err, c.want)
			}
		})
	}
	t.Run("readLimit 2 sets default, cap and schema text", func(t *testing.T) {
		r := newRig(t, withCaps(2, 2000, 51200))
		r.put("a", "1\n2\n3\n")
		out, err := r.run(r.agent("A"), "read", `{"file_path":"a"}`)
		if err != nil || !strings.Contains(out.Content[0].Text, "(Showing lines 1-2 of 3. Use offset=3 to continue.)") {
			t.Fatalf("default limit not 2: %v %v", out.Content, err)
		}
		if _, err := r.run(r.agent("A"), "read", `{"file_path":"a","limit":3}`); err == nil || err.Error() != "limit must be less than or equal to 2" {
			t.Fatalf("cap not 2: %v", err)
		}
		if !strings.Contains(string(r.tools.Read.Parameters), `"Maximum number of lines to return. Defaults to 2."`) {
			t.Fatalf("schema text: %s", r.tools.Read.Parameters)
		}
	})
}

func TestWindowFooters(t *testing.T) {
	cases := []struct {
		name                       string
		offset, limit, maxB, total int
		want                       string
	}{
		{"end of file", 1, 10, 1000, 3, "(End of file - total 3 lines)"},
		{"more lines", 1, 2, 1000, 3, "(Showing lines 1-2 of 3. Use offset=3 to continue.)"},
		{"byte capped", 1, 10, 3, 3, "(Output capped. Showing lines 1-2. Use offset=3 to continue.)"},
		{"empty file", 1, 10, 1000, 0, "(End of file - total 0 lines)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := &Window{Offset: c.offset, Limit: c.limit, MaxLineLength: 100, MaxBytes: c.maxB}
			for range c.total {
				w.Add(lineOf("a"))
			}
			if got := w.Footer(); got != c.want {
				t.Fatalf("footer %q, want %q", got, c.want)
			}
		})
	}
}

func TestLangFromPath(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"a.ts", "typescript"}, {"A.TS", "typescript"}, {"dir.go/x.py", "python"}, {"x.tar.gz", ""},
		{".bashrc", ""}, {"Makefile", ""}, {"x.txt", ""}, {"x.", ""}, {"x.constructor", ""}, {"x.md", "markdown"},
	} {
		if got := LangFromPath(c.path); got != c.want {
			t.Errorf("LangFromPath(%q) = %q, want %q", c.path, got, c.want)
		}
	}
}

func lineOf(s string) fsobserve.Line { return fsobserve.Line{Text: s} }
