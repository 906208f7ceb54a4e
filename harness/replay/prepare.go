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
	}
	return fmt.Errorf("unknown workspace preparation %q", name)
}

// writeFixture writes a preparation's file, making its directories.
func writeFixture(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
