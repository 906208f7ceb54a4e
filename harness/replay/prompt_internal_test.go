package replay

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

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
