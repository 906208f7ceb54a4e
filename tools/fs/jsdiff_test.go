package fs

import (
	"encoding/json"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// jsdiffDir is Debian's node-diff package (jsdiff 5.0): apt-get install node-diff.
const jsdiffDir = "/usr/share/nodejs/diff"

const jsdiffScript = `
const Diff = require(process.argv[2]);
const cases = JSON.parse(require('fs').readFileSync(process.argv[3]));
process.stdout.write(JSON.stringify(cases.map(([a, b]) =>
  Diff.structuredPatch('p', 'p', a, b, '', '', {context: 3}).hunks.map(h => {
    const o = [], n = [];
    for (const l of h.lines) {
      const t = l.slice(1);
      if (l[0] === ' ') { o.push(t); n.push(t); } else if (l[0] === '-') o.push(t); else if (l[0] === '+') n.push(t);
    }
    return {path: 'p', oldText: o.length ? o.join('\n') : null, newText: n.join('\n')};
  }))));
`

// TestDiffsMatchJsdiff compares Diffs with real jsdiff structuredPatch on 3000
// seeded random line texts over a four-line alphabet (many equal-cost
// alignments, with and without final newlines). It needs node and Debian's
// node-diff; without them it is skipped (the table cases still run).
func TestDiffsMatchJsdiff(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	if _, err := os.Stat(jsdiffDir); err != nil {
		t.Skip("jsdiff not installed (apt-get install node-diff)")
	}
	rng := rand.New(rand.NewSource(1))
	gen := func() string {
		n := rng.Intn(25)
		var b strings.Builder
		for i := range n {
			b.WriteByte(byte('a' + rng.Intn(4)))
			if i < n-1 || rng.Intn(3) > 0 {
				b.WriteByte('\n')
			}
		}
		return b.String()
	}
	var cases [][2]string
	for range 3000 {
		a, b := gen(), ""
		if rng.Intn(2) == 0 {
			b = gen()
		} else {
			ls := strings.Split(a, "\n")
			for range 1 + rng.Intn(3) {
				ls[rng.Intn(len(ls))] = string(rune('a' + rng.Intn(5)))
			}
			b = strings.Join(ls, "\n")
		}
		cases = append(cases, [2]string{a, b})
	}
	dir := t.TempDir()
	data, _ := json.Marshal(cases)
	casesFile, script := filepath.Join(dir, "cases.json"), filepath.Join(dir, "diff.js")
	if err := os.WriteFile(casesFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte(jsdiffScript), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, script, jsdiffDir, casesFile).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var want [][]DiffEntry
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(cases) {
		t.Fatalf("jsdiff returned %d results for %d cases", len(want), len(cases))
	}
	bad := 0
	for i, c := range cases {
		got, _ := json.Marshal(Diffs("p", c[0], c[1]))
		if want[i] == nil {
			want[i] = []DiffEntry{}
		}
		exp, _ := json.Marshal(want[i])
		if string(got) != string(exp) {
			if bad++; bad <= 5 {
				t.Errorf("%q -> %q\n got %s\nwant %s", c[0], c[1], got, exp)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d cases differ from jsdiff", bad, len(cases))
	}
}
