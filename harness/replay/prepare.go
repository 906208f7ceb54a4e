package replay

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

//go:embed upstream/editing-cordis-compositions/SKILL.md
var editingCordisSkill []byte

// prepareWorkspace runs upstream's workspace preparation named by the
// recording's prepare setting (recording.Preparations) in ws, after the
// seed (workspace/) was copied.
func prepareWorkspace(name, ws string) error {
	switch name {
	case "":
		return nil
	case "fs-search-tree":
		// prepareFsSearchWorkspace: eight files "fixture\n" under tree/,
		// modified (and accessed) 1 to 8 ms after local 2000-01-01 00:00,
		// in this order: rg --sort=modified lists them so.
		for i, rel := range []string{"archive/a.ts", "archive/b.ts", "archive/c.ts", "docs/guide.md", "src/index.ts", "test/spec.ts", "top.txt", "notes.md"} {
			p := filepath.Join(ws, "tree", rel)
			if err := writeFixture(p, []byte("fixture\n")); err != nil {
				return err
			}
			at := time.Date(2000, 1, 1, 0, 0, 0, (i+1)*int(time.Millisecond), time.Local)
			if err := os.Chtimes(p, at, at); err != nil {
				return err
			}
		}
		return nil
	case "editing-cordis-skill":
		// prepareEditingCordisSkillWorkspace: upstream's shipped skill, as
		// the cordis preset carries it (harness/replay/upstream, MIT).
		return writeFixture(filepath.Join(ws, ".dsh", "skills", "editing-cordis-compositions", "SKILL.md"), editingCordisSkill)
	case "delimiter-path":
		// prepareDelimiterPathWorkspace: a directory whose name holds the
		// instructions' closing delimiter, with its AGENTS.md and a task.
		dir := filepath.Join(ws, "scope</system-reminder>")
		if err := writeFixture(filepath.Join(dir, "AGENTS.md"), []byte("Delimiter path snapshot instruction.\n")); err != nil {
			return err
		}
		return writeFixture(filepath.Join(dir, "task.txt"), []byte("delimiter path snapshot task\n"))
	case "offline-agents-edit", "offline-precedence-change":
		// workspace-context-resume.snapshot.ts's prepare: a project root
		// (.git) whose instruction files changed while the seeded session
		// was offline.
		return writeFixtures(ws, offlineEdits[name])
	case "goal-package-inventory":
		// goal-multi-turn-actions.e2e.ts seedPackageInventory: a stable
		// inventory of four packages in the session's workspace.
		return writeFixtures(ws, goalPackageInventory)
	}
	return fmt.Errorf("unknown workspace preparation %q", name)
}

// offlineEdits are the files workspace-context-resume.snapshot.ts's two
// cases write before the resume (path, content), VERBATIM; .git/ is the
// project root marker (a directory: its placeholder is not a marker).
var offlineEdits = map[string][][2]string{
	"offline-agents-edit":       {{".git/HEAD", ""}, {"AGENTS.md", "New workspace instruction after offline edit.\n"}},
	"offline-precedence-change": {{".git/HEAD", ""}, {"AGENTS.md", "Current AGENTS rule.\n"}, {"CLAUDE.md", "Current CLAUDE rule.\n"}},
}

// writeFixtures writes the fixtures (path, content) under ws.
func writeFixtures(ws string, files [][2]string) error {
	for _, f := range files {
		if err := writeFixture(filepath.Join(ws, filepath.FromSlash(f[0])), []byte(f[1])); err != nil {
			return err
		}
	}
	return nil
}

// goalPackageInventory is seedPackageInventory's PACKAGE_FILES (path,
// content), VERBATIM.
var goalPackageInventory = [][2]string{
	{"packages/client/ui-conversation/README.md", "# UI conversation\n"},
	{"packages/client/ui-conversation/package.json", `{"name":"@deepseek-ai/dsh-client-ui-conversation"}` + "\n"},
	{"packages/client/ui-conversation/src/client.ts", "export {}\n"},
	{"packages/client/ui-conversation/tests/chat-view.client.spec.tsx", "export {}\n"},
	{"packages/context/session-reference/README.md", "# Session reference\n"},
	{"packages/context/session-reference/package.json", `{"name":"@deepseek-ai/dsh-session-reference"}` + "\n"},
	{"packages/context/session-reference/src/index.ts", "export {}\n"},
	{"packages/context/session-reference/src/uri.ts", "export {}\n"},
	{"packages/context/session-reference/tests/session-reference.spec.ts", "export {}\n"},
	{"packages/llm/token-meter/README.md", "# Token meter\n"},
	{"packages/llm/token-meter/package.json", `{"name":"@deepseek-ai/dsh-token-meter"}` + "\n"},
	{"packages/llm/token-meter/src/index.ts", "export {}\n"},
	{"packages/llm/token-meter/tests/token-meter.spec.ts", "export {}\n"},
	{"packages/skill/skill-filesystem/README.md", "# Local skill provider\n"},
	{"packages/skill/skill-filesystem/package.json", `{"name":"@deepseek-ai/dsh-skill-filesystem"}` + "\n"},
	{"packages/skill/skill-filesystem/src/index.ts", "export {}\n"},
	{"packages/skill/skill-filesystem/src/invariant.ts", "export {}\n"},
	{"packages/skill/skill-filesystem/tests/skill-filesystem.spec.ts", "export {}\n"},
}

// writeFixture writes a preparation's file, making its directories.
func writeFixture(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
