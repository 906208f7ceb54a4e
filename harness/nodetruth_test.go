package harness

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNodeTruth: node's output is decoded for comparison; DSHSIM_UPDATE=1
// writes it to node-truth.json and leaves nothing to compare; a script node
// cannot run, or output that is not JSON, fails the test naming the script.
func TestNodeTruth(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("needs node (a JavaScript engine) on PATH")
	}
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cases.json", `["a","b"]`)
	write("truth.js", `const c = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8'));
process.stdout.write(JSON.stringify({rows: c.map((x) => x.toUpperCase())}) + '\n');
`)
	pinned := filepath.Join(dir, "node-truth.json")

	t.Setenv(UpdateEnv, "")
	var fresh struct{ Rows []string }
	r := runRecorded(t, func(tb testing.TB) {
		if !NodeTruth(tb, dir, &fresh) {
			tb.Error("compare mode returned false")
		}
	})
	if r.failed || strings.Join(fresh.Rows, ",") != "A,B" {
		t.Errorf("compare: rows %q, msgs %q; want A,B decoded", fresh.Rows, r.msgs)
	}
	if _, err := os.Stat(pinned); !os.IsNotExist(err) {
		t.Errorf("compare mode touched %s: %v", pinned, err)
	}

	t.Setenv(UpdateEnv, "1")
	r = runRecorded(t, func(tb testing.TB) {
		if NodeTruth(tb, dir, &fresh) {
			tb.Error("update mode returned true")
		}
	})
	if got, err := os.ReadFile(pinned); r.failed || err != nil || string(got) != `{"rows":["A","B"]}`+"\n" {
		t.Errorf("update: %s = %q, %v; msgs %q", pinned, got, err, r.msgs)
	}

	t.Setenv(UpdateEnv, "")
	for _, tc := range []struct{ name, script, want string }{
		{"node fails", "process.exit(3)", "truth.js: exit status 3"},
		{"not JSON", "process.stdout.write('rows')", "truth.js printed no JSON"},
	} {
		write("truth.js", tc.script)
		r = runRecorded(t, func(tb testing.TB) { NodeTruth(tb, dir, &fresh) })
		if !r.failed || !strings.Contains(strings.Join(r.msgs, "\n"), tc.want) {
			t.Errorf("%s: failed=%v msgs=%q, want %q", tc.name, r.failed, r.msgs, tc.want)
		}
	}
}
