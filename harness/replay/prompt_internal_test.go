package replay

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/recording"
	"github.com/dshsim/dshsim/harness/replay/recording/recordingtest"
	"github.com/dshsim/dshsim/stack"
)

// TestComparePromptFlagsWhatTheStackDoesNotRender: a code-mode recording
// whose prompt the stack renders without tools:code-only, and a tools mode
// whose sections cannot be rendered (no runtime), are flags.
func TestComparePromptFlagsWhatTheStackDoesNotRender(t *testing.T) {
	rec := recordingtest.Load(t, filepath.Join("..", "..", "transcripts", "code-mode-turn"))
	for _, c := range []struct {
		name     string
		sections []stack.PromptSection
		err      error
		flag     string
	}{
		{"no tools:code-only in code mode", nil, nil, "system-prompt.expected.md: code mode renders no tools:code-only section"},
		{"no runtime", nil, errors.New("dsh-tools: mode \"code\" requires a code runtime"), "system-prompt.expected.md: the stack renders no sections: dsh-tools: mode \"code\" requires a code runtime"},
	} {
		t.Run(c.name, func(t *testing.T) {
			flags, _ := comparePrompt(rec, stack.ToolsCode, c.sections, c.err)
			if !strings.Contains(strings.Join(flags, "\n"), c.flag) {
				t.Errorf("flags %q, want %q", flags, c.flag)
			}
		})
	}
}

// TestComparePromptLeavesAWebPinOut: a web recording's system-prompt pin
// is not compared (the web app's own paragraphs, outside the tool
// boundary), while the same pin and sections in another front end's
// recording are flagged.
func TestComparePromptLeavesAWebPinOut(t *testing.T) {
	rec := recordingtest.Load(t, filepath.Join("..", "..", "transcripts", "code-mode-turn"))
	rec.SystemPrompt = []string{"You are a coding agent powered by the deepseek-v4-flash model. Your working directory is {{cwd}}."}
	sections := []stack.PromptSection{{Name: "tool:bash", Text: "Check the exit code."}}
	if flags, _ := comparePrompt(rec, stack.ToolsNative, sections, nil); len(flags) == 0 {
		t.Fatal("an ACP pin without the stack's section: no flag")
	}
	rec.Frontend = recording.Web
	flags, notes := comparePrompt(rec, stack.ToolsNative, sections, nil)
	if len(flags) > 0 || len(notes) != 1 || !strings.Contains(notes[0], "not compared") {
		t.Fatalf("web: flags %q, notes %q; want no flag and the not-compared note", flags, notes)
	}
}
