package spill

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/session/sessiontest"
)

func newCall(t *testing.T, name, sessionID string) *pipeline.Call {
	return newCallTB(t, name, sessionID)
}

func newCallTB(t testing.TB, name, sessionID string) *pipeline.Call {
	t.Helper()
	var agent *pipeline.Agent
	if sessionID != "" {
		agent = &pipeline.Agent{ID: "agent", Session: sessiontest.New(t, sessionID, "/")}
	}
	return pipeline.NewCall("call-1", name, json.RawMessage(`{}`), agent, nil)
}

type warnings []string

func (w *warnings) add(s string) { *w = append(*w, s) }

func newPolicy(t testing.TB, cfg Config, root string) (*Policy, *warnings) {
	t.Helper()
	if root == "" {
		root = t.TempDir()
	}
	st, err := NewStore(root)
	if err != nil {
		t.Fatal(err)
	}
	w := &warnings{}
	p, err := New(cfg, st, w.add)
	if err != nil {
		t.Fatal(err)
	}
	return p, w
}

func f(v float64) *float64 { return &v }

func TestNewValidatesCap(t *testing.T) {
	st, _ := NewStore(t.TempDir())
	tests := []struct {
		name    string
		cfg     Config
		wantErr string
		enabled bool
	}{
		{"omitted cap disables the policy", Config{}, "", false},
		{"default config is the base bundle token cap", DefaultConfig(), "", true},
		{"zero token cap is valid", Config{MaxInlineTokens: f(0)}, "", true},
		{"negative token cap rejected", Config{MaxInlineTokens: f(-1)}, "spill-policy: maxInlineTokens must be a non-negative integer (got -1)", false},
		{"fractional token cap rejected", Config{MaxInlineTokens: f(1.5)}, "spill-policy: maxInlineTokens must be a non-negative integer (got 1.5)", false},
		{"negative byte cap rejected", Config{MaxInlineBytes: f(-3)}, "spill-policy: maxInlineBytes must be a non-negative integer (got -3)", false},
		{"fractional byte cap rejected", Config{MaxInlineBytes: f(0.25)}, "spill-policy: maxInlineBytes must be a non-negative integer (got 0.25)", false},
		{"both caps rejected", Config{MaxInlineTokens: f(1), MaxInlineBytes: f(1)}, "spill-policy: set only one of maxInlineTokens and maxInlineBytes", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.cfg, st, nil)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Enabled() != tt.enabled {
				t.Errorf("Enabled() = %v, want %v", p.Enabled(), tt.enabled)
			}
		})
	}
}

func TestNoStoreKeepsOriginalWithWarning(t *testing.T) {
	var warned []string
	p, err := New(TokenConfig(10), nil, func(s string) { warned = append(warned, s) })
	if err != nil {
		t.Fatal(err)
	}
	res := result(strings.Repeat("x", 1000))
	got, spilled := p.Apply(newCall(t, "bash", "s"), res)
	if spilled || got.Text() != res.Text() || len(warned) != 1 || !strings.Contains(warned[0], "no spill store") {
		t.Errorf("spilled=%v warnings=%q", spilled, warned)
	}
}

func TestEncodeSegment(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"safe set kept", "bash.txt", "bash.txt"},
		{"safe punctuation kept", "a-b_c.D9", "a-b_c.D9"},
		{"separator encoded", "a/b", "a~002Fb"},
		{"backslash encoded", `a\b`, "a~005Cb"},
		{"tilde encoded", "~x", "~007Ex"},
		{"space encoded", "a b", "a~0020b"},
		{"dot token encoded", ".", "~002E"},
		{"dot dot token encoded", "..", "~002E~002E"},
		{"empty becomes tilde", "", "~"},
		{"non-ascii per utf-16 unit", "é", "~00E9"},
		{"astral char as surrogate pair", "😀", "~D83D~DE00"},
		{"traversal name stays one segment", "../../etc/passwd", "..~002F..~002Fetc~002Fpasswd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EncodeSegment(tt.in); got != tt.want {
				t.Errorf("EncodeSegment(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSessionDirStableAndDistinct(t *testing.T) {
	a, b := SessionDir("s-1"), SessionDir("s-2")
	if a != SessionDir("s-1") {
		t.Error("not stable")
	}
	if a == b {
		t.Error("not distinct")
	}
	if !regexp.MustCompile(`^session-[0-9a-f]{12}$`).MatchString(a) {
		t.Errorf("SessionDir = %q", a)
	}
}

func TestStore(t *testing.T) {
	t.Run("saves text with private permissions and byte count", func(t *testing.T) {
		st, _ := NewStore(t.TempDir())
		s, err := st.Save("sess", "bash.txt", "hello")
		if err != nil {
			t.Fatal(err)
		}
		if s.Bytes != 5 || s.RetrievalHint != RetrievalHint {
			t.Errorf("saved = %+v", s)
		}
		got, _ := os.ReadFile(s.Locator)
		if string(got) != "hello" {
			t.Errorf("content = %q", got)
		}
		fi, _ := os.Stat(s.Locator)
		di, _ := os.Stat(filepath.Dir(s.Locator))
		if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
			t.Errorf("perms file %v dir %v", fi.Mode().Perm(), di.Mode().Perm())
		}
		if filepath.Base(filepath.Dir(s.Locator)) != SessionDir("sess") {
			t.Errorf("dir = %s", s.Locator)
		}
		if !regexp.MustCompile(`^[0-9a-f]{12}-bash\.txt$`).MatchString(filepath.Base(s.Locator)) {
			t.Errorf("name = %s", filepath.Base(s.Locator))
		}
	})
	t.Run("same name gives distinct paths", func(t *testing.T) {
		st, _ := NewStore(t.TempDir())
		a, _ := st.Save("s", "x.txt", "a")
		b, _ := st.Save("s", "x.txt", "b")
		if a.Locator == b.Locator {
			t.Error("same path twice")
		}
	})
	t.Run("traversal name stays in the session dir", func(t *testing.T) {
		root := t.TempDir()
		st, _ := NewStore(root)
		s, err := st.Save("s", "../../escape", "x")
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(s.Locator) != filepath.Join(root, SessionDir("s")) {
			t.Errorf("escaped: %s", s.Locator)
		}
	})
	t.Run("relative root is made absolute", func(t *testing.T) {
		st, err := NewStore("rel/root")
		if err != nil {
			t.Fatal(err)
		}
		if !filepath.IsAbs(st.Root()) {
			t.Errorf("root = %q", st.Root())
		}
	})
	t.Run("default root is private and stable under tmpdir", func(t *testing.T) {
		t.Setenv("TMPDIR", t.TempDir())
		st, _ := NewStore("")
		a, err := st.Save("s", "a", "1")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := st.Save("t", "b", "2")
		root := st.Root()
		if !strings.HasPrefix(filepath.Base(root), "dsh-spill-") || filepath.Dir(root) != os.Getenv("TMPDIR") {
			t.Errorf("root = %s", root)
		}
		if !strings.HasPrefix(a.Locator, root+"/") || !strings.HasPrefix(b.Locator, root+"/") {
			t.Errorf("root not stable: %s %s", a.Locator, b.Locator)
		}
	})
	t.Run("unwritable root rejects", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		os.WriteFile(file, nil, 0o600)
		st, _ := NewStore(file)
		if _, err := st.Save("s", "a", "x"); err == nil {
			t.Error("saved under a regular file")
		}
	})
	t.Run("no session owner rejects", func(t *testing.T) {
		st, _ := NewStore(t.TempDir())
		if _, err := st.Save("", "a", "x"); err == nil {
			t.Error("saved without owner")
		}
	})
}

var noticeRe = regexp.MustCompile(`\(Omitted (\d+) bytes\. Full formatted result stored at: (\S+)\. Use read with offset/limit, or grep this path to search within it\.\)$`)

func TestApply(t *testing.T) {
	big := strings.Repeat("0123456789abcdef\n", 500) // 8500 bytes, 2129 tokens
	tests := []struct {
		name      string
		cfg       Config
		tool      string
		session   string
		nested    bool
		res       pipeline.Result
		spilled   bool
		warn      string
		checkText func(t *testing.T, text string)
	}{
		{name: "small result passes", cfg: TokenConfig(300), tool: "bash", session: "s", res: result("hi")},
		{name: "non-text block passes", cfg: TokenConfig(10), tool: "bash", session: "s", res: pipeline.Result{Content: []pipeline.Block{{Type: "image"}, pipeline.TextBlock(big)}}},
		{name: "read is never spilled", cfg: TokenConfig(10), tool: "read", session: "s", res: result(big)},
		{name: "nested call untouched", cfg: TokenConfig(10), tool: "bash", session: "s", nested: true, res: result(big)},
		{name: "no owner keeps original and warns", cfg: TokenConfig(300), tool: "bash", res: result(big), warn: "no session owner"},
		{name: "notice larger than cap keeps original and warns", cfg: TokenConfig(20), tool: "bash", session: "s", res: result(big), warn: "exceeds maxInlineTokens 20"},
		{name: "byte notice larger than cap keeps original and warns", cfg: ByteConfig(50), tool: "bash", session: "s", res: result(big), warn: "exceeds maxInlineBytes 50"},
		{name: "oversized token result replaced by head gap tail notice", cfg: TokenConfig(300), tool: "bash", session: "s", res: result(big), spilled: true, checkText: func(t *testing.T, text string) {
			if !strings.HasPrefix(text, "0123456789abcdef\n") || !strings.Contains(text, Gap) {
				t.Errorf("no head or gap: %q", text[:40])
			}
			if EstimateTokens(text) > 300 {
				t.Errorf("cost %d > cap", EstimateTokens(text))
			}
		}},
		{name: "oversized byte result has no gap and fits the cap", cfg: ByteConfig(400), tool: "bash", session: "s", res: result(big), spilled: true, checkText: func(t *testing.T, text string) {
			if strings.Contains(text, "[...]") || len(text) > 400 {
				t.Errorf("len %d text %q", len(text), text)
			}
		}},
		{name: "error result spilled keeps isError", cfg: TokenConfig(300), tool: "bash", session: "s", res: pipeline.Result{IsError: true, Content: []pipeline.Block{pipeline.TextBlock("Error: " + big)}}, spilled: true},
		{name: "cap invariant for large body with tiny cap", cfg: TokenConfig(110), tool: "bash", session: "s", res: result(strings.Repeat("x", 1<<20)), spilled: true, checkText: func(t *testing.T, text string) {
			if EstimateTokens(text) > 110 {
				t.Errorf("cost %d > 110", EstimateTokens(text))
			}
		}},
		{name: "multi-block head keeps whole blocks then cuts", cfg: TokenConfig(200), tool: "bash", session: "s", res: pipeline.Result{Content: []pipeline.Block{pipeline.TextBlock("first block\n"), pipeline.TextBlock(big), pipeline.TextBlock("\nlast block")}}, spilled: true, checkText: func(t *testing.T, text string) {
			if !strings.HasPrefix(text, "first block\n0123") || !strings.Contains(text, "\nlast block\n\n(Omitted") {
				t.Errorf("text = %q", text)
			}
		}},
		{name: "multibyte text never split", cfg: TokenConfig(120), tool: "bash", session: "s", res: result(strings.Repeat("é😀", 3000)), spilled: true, checkText: func(t *testing.T, text string) {
			if strings.ContainsRune(text, '\uFFFD') {
				t.Error("split a sequence")
			}
		}},
		{name: "byte layout never splits utf-8", cfg: ByteConfig(300), tool: "bash", session: "s", res: result(strings.Repeat("é😀", 3000)), spilled: true, checkText: func(t *testing.T, text string) {
			if strings.ContainsRune(text, '\uFFFD') {
				t.Error("split a sequence")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, w := newPolicy(t, tt.cfg, "")
			call := newCall(t, tt.tool, tt.session)
			if tt.nested {
				call = pipeline.NewSubCall(newCall(t, "run_code", tt.session), "c1:code:1", tt.tool, call.Args(), nil)
			}
			tt.res.ContextMessages = []pipeline.ContextMessage{{Plugin: "p", Texts: []string{"ctx"}}}
			got, spilled := p.Apply(call, tt.res)
			if spilled != tt.spilled {
				t.Fatalf("spilled = %v, want %v (warnings %v)", spilled, tt.spilled, *w)
			}
			if tt.warn != "" && (len(*w) != 1 || !strings.Contains((*w)[0], tt.warn)) {
				t.Errorf("warnings = %q, want one containing %q", *w, tt.warn)
			}
			if tt.warn == "" && len(*w) != 0 {
				t.Errorf("unexpected warnings %q", *w)
			}
			if !spilled {
				if got.Text() != tt.res.Text() || len(got.Content) != len(tt.res.Content) {
					t.Error("original not kept")
				}
				if tt.warn != "" { // a refused spill leaves no orphan file
					files, _ := filepath.Glob(filepath.Join(p.store.Root(), "*", "*"))
					if len(files) != 0 {
						t.Errorf("orphan files %v", files)
					}
				}
				return
			}
			if len(got.Content) != 1 || got.IsError != tt.res.IsError || len(got.ContextMessages) != 1 {
				t.Errorf("shape changed: %+v", got)
			}
			text := got.Text()
			m := noticeRe.FindStringSubmatch(text)
			if m == nil {
				t.Fatalf("no notice in %q", text)
			}
			full, err := os.ReadFile(m[2])
			if err != nil {
				t.Fatal(err)
			}
			if string(full) != tt.res.Text() {
				t.Error("spill file is not the full text")
			}
			if tt.checkText != nil {
				tt.checkText(t, text)
			}
		})
	}
}

func result(s string) pipeline.Result {
	return pipeline.Result{Content: []pipeline.Block{pipeline.TextBlock(s)}}
}

// The bash-spill recording was made with an 800-byte cap and a 70-character
// spill path: the result is exactly 800 bytes, 303 head + 302 tail bytes, 1417 omitted.
func TestByteLayoutReproducesBashSpillRecording(t *testing.T) {
	data, err := os.ReadFile("../transcripts/bash-spill/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var want string
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.Contains(strings.ReplaceAll(line, " ", ""), `"type":"tool/result"`) {
			continue
		}
		var ev struct { // encoding/json matches the keys without regard to case
			Data struct {
				Message struct {
					Content []struct{ Content []pipeline.Block }
				}
			}
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		want = ev.Data.Message.Content[0].Content[0].Text
	}
	root := "/tmp/dsh-acp-snap-" + randHex(t, 9)
	t.Cleanup(func() { os.RemoveAll(root) })
	p, _ := newPolicy(t, ByteConfig(800), root)
	out := "SPILL_START-" + strings.Repeat("x", 2000) + "-SPILL_END"
	got, spilled := p.Apply(newCall(t, "bash", "sess"), result(out))
	if !spilled {
		t.Fatal("not spilled")
	}
	text := got.Text()
	loc := noticeRe.FindStringSubmatch(text)[2]
	wantLoc := noticeRe.FindStringSubmatch(want)[2]
	if len(loc) != len(wantLoc) {
		t.Fatalf("locator length %d, recording %d", len(loc), len(wantLoc))
	}
	if norm := strings.Replace(text, loc, wantLoc, 1); norm != want {
		t.Errorf("result differs from recording:\n got %q\nwant %q", norm, want)
	}
	if len(text) != 800 || !strings.Contains(text, "(Omitted 1417 bytes.") || !strings.HasPrefix(text, "SPILL_START-"+strings.Repeat("x", 303-12)+strings.Repeat("x", 302-10)+"-SPILL_END\n\n") {
		t.Errorf("len %d text %q", len(text), text)
	}
}

func randHex(t *testing.T, n int) string {
	b := make([]byte, (n+1)/2)
	f, err := os.Open("/dev/urandom")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.Read(b)
	const hexd = "0123456789abcdef"
	var s strings.Builder
	for _, c := range b {
		s.WriteByte(hexd[c>>4])
		s.WriteByte(hexd[c&15])
	}
	return s.String()[:n]
}

func TestListener(t *testing.T) {
	big := strings.Repeat("line of output\n", 400)
	tests := []struct {
		name    string
		inner   pipeline.PostDecision
		res     pipeline.Result
		spilled bool
		block   bool
	}{
		{"bounds an inner replacement of the content", pipeline.PostDecision{Kind: pipeline.PostAccept, Content: []pipeline.Block{pipeline.TextBlock(big)}}, result("small"), true, false},
		{"bounds the result content when inner accepts unchanged", pipeline.Accept(), result(big), true, false},
		{"inner replacement that is small stays", pipeline.PostDecision{Kind: pipeline.PostAccept, Content: []pipeline.Block{pipeline.TextBlock("short")}}, result(big), false, false},
		{"block decision passes unchanged", pipeline.PostDecision{Kind: pipeline.PostBlock, Feedback: []pipeline.Block{pipeline.TextBlock(big)}}, result(big), false, true},
		{"keeps the context messages of the inner decision", pipeline.PostDecision{Kind: pipeline.PostAccept, ContextMessages: []pipeline.ContextMessage{{Plugin: "p", Texts: []string{"a"}}}}, result(big), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newPolicy(t, TokenConfig(300), "")
			l := p.Listener()
			d, err := l(context.Background(), newCall(t, "bash", "s"), tt.res, func() (pipeline.PostDecision, error) { return tt.inner, nil })
			if err != nil {
				t.Fatal(err)
			}
			if tt.block {
				if d.Kind != pipeline.PostBlock || d.Feedback[0].Text != big {
					t.Errorf("block changed: %+v", d)
				}
				return
			}
			if len(d.ContextMessages) != len(tt.inner.ContextMessages) {
				t.Errorf("context messages = %v", d.ContextMessages)
			}
			hasNotice := len(d.Content) == 1 && noticeRe.MatchString(d.Content[0].Text)
			if hasNotice != tt.spilled {
				t.Errorf("spilled = %v, want %v: %+v", hasNotice, tt.spilled, d)
			}
			if !tt.spilled && tt.inner.Content != nil && d.Content[0].Text != tt.inner.Content[0].Text {
				t.Error("inner replacement lost")
			}
		})
	}
}

// TestOverBoundary: a result of exactly the budget fits (it is over only
// past it), in tokens and in bytes, for one block and summed over blocks.
func TestOverBoundary(t *testing.T) {
	text := func(n int) pipeline.Block { return pipeline.TextBlock(strings.Repeat("x", n)) }
	tests := []struct {
		name    string
		cfg     Config
		content []pipeline.Block
		want    bool
	}{
		// ceil(24/4)+4 = 10 tokens.
		{name: "tokens: exactly the cap fits", cfg: TokenConfig(10), content: []pipeline.Block{text(24)}, want: false},
		{name: "tokens: one past the cap is over", cfg: TokenConfig(10), content: []pipeline.Block{text(25)}, want: true},
		// 5+4 and 1+4 (ceil(20/4)+4, ceil(4/4)+4) = 14 tokens over two blocks.
		{name: "tokens: two blocks summing to the cap fit", cfg: TokenConfig(14), content: []pipeline.Block{text(20), text(4)}, want: false},
		{name: "tokens: two blocks one past the cap are over", cfg: TokenConfig(13), content: []pipeline.Block{text(20), text(4)}, want: true},
		{name: "bytes: exactly the cap fits", cfg: ByteConfig(50), content: []pipeline.Block{text(30), text(20)}, want: false},
		{name: "bytes: one past the cap is over", cfg: ByteConfig(50), content: []pipeline.Block{text(30), text(21)}, want: true},
	}
	if EstimateTokens(strings.Repeat("x", 24)) != 10 || EstimateTokens(strings.Repeat("x", 25)) != 11 {
		t.Fatalf("the estimate changed: fix the case sizes")
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPolicy(t, tc.cfg, "")
			if got := p.Over(tc.content); got != tc.want {
				t.Errorf("Over = %v, want %v", got, tc.want)
			}
		})
	}
}
