package htmlreport_test

import (
	"bytes"
	stdcmp "cmp"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/htmlreport"
)

const chromium = "/usr/bin/chromium"

// clicker is the test's script, appended to the page after the page's own:
// it reads the summary table's cells (as shown), clicks column headers one
// after another, reads the table after each click, and leaves what it saw as
// JSON in <pre id="observed">.
const clicker = `<script>
(function () {
  function rows() {
    return Array.prototype.map.call(document.querySelectorAll('#overview tbody tr'), function (tr) {
      return Array.prototype.map.call(tr.cells, function (td) { return td.textContent; });
    });
  }
  var seen = {initial: rows()};
  [['verdict', 'verdict'], ['verdict again', 'verdict'], ['events', 'events'], ['first', 'first'], ['served', 'served'], ['name', 'name']].forEach(function (c) {
    document.querySelector('#overview th[data-col="' + c[1] + '"]').click();
    seen[c[0]] = rows();
    seen[c[0] + ' aria-sort'] = [[document.querySelector('#overview th[data-col="' + c[1] + '"]').getAttribute('aria-sort'),
      String(document.querySelectorAll('#overview th[aria-sort="none"]').length)]];
  });
  seen.children = Array.prototype.map.call(document.querySelectorAll('div.child'), function (d) {
    var up = d.parentElement.closest('div.child');
    var prev = d.closest('tr').previousElementSibling;
    var call = d.getAttribute('data-call');
    return [d.closest('section').getAttribute('data-name'), d.getAttribute('data-file'), up ? up.getAttribute('data-file') : '',
      d.getAttribute('data-verdict'), String(!!prev && call !== '' && prev.textContent.indexOf(call) >= 0)];
  });
  var pre = document.createElement('pre');
  pre.id = 'observed';
  pre.textContent = JSON.stringify(seen);
  document.body.appendChild(pre);
})();
</script>
`

type rendered struct {
	results []*replay.Result
	dom     []byte
}

var (
	renderOnce sync.Once
	page       rendered
	pageErr    error
)

// renderedPage replays upstream recordings, a mismatching and a bad one,
// writes their report with the clicker script and loads it in headless
// Chromium, once for the tests of this file; it returns the results and the
// DOM after the scripts ran.
func renderedPage(t *testing.T) rendered {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		t.Skip("chromium is not installed (Debian package: chromium; apt-get install -y chromium): " + err.Error())
	}
	renderOnce.Do(func() { page, pageErr = render() })
	if pageErr != nil {
		t.Fatal(pageErr)
	}
	return page
}

func render() (rendered, error) {
	root := "../../.."
	var dirs []string
	for _, d := range []string{"transcripts/fs-read", "transcripts/fs-edit", "transcripts/escalation-rejected",
		"testdata/replay/flagged/changed-seed", "testdata/replay/bad/unknown-event-type",
		"testdata/replay/oracle/subagent-oracle-depth"} {
		dirs = append(dirs, filepath.Join(root, d))
	}
	results := replay.Run(context.Background(), dirs, replay.RunOptions{Parallel: 2})
	// No driver serves a tool body for these recordings: the test names
	// some itself, so the served column has something to show and sort.
	for _, r := range results {
		switch r.Name {
		case "fs-edit":
			r.Served = []string{"web_fetch"}
		case "fs-read":
			r.Served = []string{"lsp_definition", "web_fetch"}
		}
	}
	var b bytes.Buffer
	if err := htmlreport.Write(&b, results); err != nil {
		return rendered{}, err
	}
	tmp, err := os.MkdirTemp("", "htmlreport-test-")
	if err != nil {
		return rendered{}, err
	}
	defer os.RemoveAll(tmp)
	file := filepath.Join(tmp, "report.html")
	if err := os.WriteFile(file, bytes.Replace(b.Bytes(), []byte("</body>"), []byte(clicker+"</body>"), 1), 0o644); err != nil {
		return rendered{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(tmp, "profile"), "--dump-dom", "file://"+file)
	// Chromium keeps crash reports and dconf's cache under the home
	// directory whatever --user-data-dir says: give it the temporary one.
	cmd.Env = append(os.Environ(), "HOME="+tmp, "XDG_CONFIG_HOME="+filepath.Join(tmp, "config"), "XDG_CACHE_HOME="+filepath.Join(tmp, "cache"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		return rendered{}, fmt.Errorf("chromium: %v\n%s", err, stderr.String())
	}
	return rendered{results, dom}, nil
}

// TestPageShowsVerdictsInHeadlessChromium: after the page's script ran,
// every recording shows the verdict the replay reached, and mismatching rows
// are highlighted.
func TestPageShowsVerdictsInHeadlessChromium(t *testing.T) {
	p := renderedPage(t)
	want := map[string]string{}
	kinds := map[string]bool{}
	for _, r := range p.results {
		want[r.Name] = r.Verdict
		kinds[r.Verdict] = true
	}
	if !kinds[replay.Mismatch] || !kinds[replay.Failed] {
		t.Fatalf("the run must contain a mismatch and an error to check the page: %v", want)
	}
	sections := regexp.MustCompile(`<section class="recording" [^>]*data-name="([^"]+)" data-verdict="([^"]+)"`).FindAllSubmatch(p.dom, -1)
	got := map[string]string{}
	for _, m := range sections {
		got[string(m[1])] = string(m[2])
	}
	if len(got) != len(want) {
		t.Fatalf("page shows %d recordings %v, want %d %v (did the script run?)", len(got), got, len(want), want)
	}
	for name, v := range want {
		if got[name] != v {
			t.Errorf("page shows %s as %q, the replay said %q", name, got[name], v)
		}
	}
	summary := regexp.MustCompile(`id="summary" data-match="(\d+)" data-mismatch="(\d+)" data-error="(\d+)"`).FindSubmatch(p.dom)
	if summary == nil {
		t.Fatalf("no rendered summary in the page")
	}
	c := replay.Count(p.results)
	for i, n := range []int{c.Match, c.Mismatch, c.Error} {
		if g, _ := strconv.Atoi(string(summary[i+1])); g != n {
			t.Errorf("summary field %d shows %d, want %d", i, g, n)
		}
	}
	if !bytes.Contains(p.dom, []byte(`<tr class="mismatch">`)) {
		t.Error("no mismatching row is highlighted")
	}
	if bytes.Contains(p.dom, []byte(`<p class="flag">report verdict`)) {
		t.Error("the page's verdict disagrees with the replay's")
	}
}

// observed is what the clicker script left in the page.
func observed(t *testing.T, p rendered) map[string][][]string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<pre id="observed">(.*?)</pre>`).FindSubmatch(p.dom)
	if m == nil {
		t.Fatal("the clicker script left nothing: did the page's script fail?")
	}
	var seen map[string][][]string
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &seen); err != nil {
		t.Fatalf("observed: %v", err)
	}
	return seen
}

// TestSummaryTableSortsInHeadlessChromium: the page opens with a summary
// table (recording, verdict, events matched, first difference, served tools)
// in the report's order, and clicking a column header sorts by that column (verdict:
// errors first, then mismatches; events: the fraction matched; ties in name
// order), clicking it again reverses the order, and another header starts
// ascending. The expected orders are computed here from the results.
func TestSummaryTableSortsInHeadlessChromium(t *testing.T) {
	p := renderedPage(t)
	seen := observed(t, p)

	type rec struct {
		cells []string
		rank  int
		frac  float64
	}
	var recs []rec
	for _, r := range p.results {
		events, frac := fmt.Sprintf("%d/%d", r.Comparison.Matched, r.Comparison.Total), 1.0
		if r.Verdict == replay.Failed {
			events, frac = "–", -1
		} else if r.Comparison.Total > 0 {
			frac = float64(r.Comparison.Matched) / float64(r.Comparison.Total)
		}
		rank := map[string]int{replay.Failed: 0, replay.Mismatch: 1, replay.Match: 2}[r.Verdict]
		recs = append(recs, rec{[]string{r.Name, r.Verdict, events, r.FirstDifference(), strings.Join(r.Served, ", ")}, rank, frac})
	}
	var reportOrder [][]string
	for _, r := range recs {
		reportOrder = append(reportOrder, r.cells)
	}
	slices.SortFunc(recs, func(a, b rec) int { return strings.Compare(a.cells[0], b.cells[0]) })
	order := func(less func(a, b rec) int) [][]string {
		s := slices.Clone(recs)
		slices.SortStableFunc(s, less)
		var out [][]string
		for _, r := range s {
			out = append(out, r.cells)
		}
		return out
	}
	byName := order(func(a, b rec) int { return 0 })
	byVerdict := order(func(a, b rec) int { return a.rank - b.rank })
	reversed := slices.Clone(byVerdict)
	slices.Reverse(reversed)
	byText := func(col int) [][]string {
		return order(func(a, b rec) int { return strings.Compare(a.cells[col], b.cells[col]) })
	}
	want := map[string][][]string{
		"initial":       reportOrder,
		"verdict":       byVerdict,
		"verdict again": reversed,
		"events":        order(func(a, b rec) int { return stdcmp.Compare(a.frac, b.frac) }),
		"first":         byText(3),
		"served":        byText(4),
		"name":          byName,
	}
	for k, w := range want {
		if d := cmp.Diff(w, seen[k]); d != "" {
			t.Errorf("summary table %s (-want +shown):\n%s", k, d)
		}
	}
	if cmp.Equal(seen["initial"], seen["verdict"]) || cmp.Equal(seen["initial"], seen["name"]) {
		t.Error("the run must be in an order that clicking the verdict and the recording headers changes")
	}
	for k, w := range map[string]string{"verdict": "ascending", "verdict again": "descending", "events": "ascending", "name": "ascending"} {
		if a := seen[k+" aria-sort"]; len(a) != 1 || a[0][0] != w || a[0][1] != "4" {
			t.Errorf("after %s the clicked header says aria-sort %v, want %s and the 4 others none", k, a, w)
		}
	}
}

// TestChildSessionsNestUnderTheirCall: a recording's child sessions are
// rendered as div.child blocks nested under the parent's tool/call row that
// started them (a grandchild inside its parent's block), each with the
// verdict of its own comparison.
func TestChildSessionsNestUnderTheirCall(t *testing.T) {
	p := renderedPage(t)
	seen := observed(t, p)
	var want [][]string
	for _, r := range p.results {
		files := map[int]string{}
		for _, c := range r.Children {
			files[c.Index] = c.File
		}
		for _, c := range r.Children {
			want = append(want, []string{r.Name, c.File, files[c.Parent], c.Verdict, "true"})
		}
	}
	if len(want) < 2 || want[1][2] == "" {
		t.Fatalf("the run must contain a grandchild to check the nesting: %v", want)
	}
	if d := cmp.Diff(want, seen["children"]); d != "" {
		t.Errorf("child blocks [recording, file, enclosing child, verdict, under its call] (-want +shown):\n%s", d)
	}
}

// TestDataNamesTheFrontend: the page's data carries a front end beyond
// ACP's, which the page shows after the recording's name.
func TestDataNamesTheFrontend(t *testing.T) {
	data, err := htmlreport.Data([]*replay.Result{{Name: "a", Verdict: replay.Match}, {Name: "b", Stated: replay.Stated{Frontend: "jsonrpc"}, Verdict: replay.Match}})
	if err != nil {
		t.Fatal(err)
	}
	var recs []struct {
		Name     string `json:"name"`
		Frontend string `json:"frontend"`
	}
	if err := json.Unmarshal(data, &recs); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Frontend != "" || recs[1].Frontend != "jsonrpc" {
		t.Fatalf("data %s", data)
	}
	var page strings.Builder
	if err := htmlreport.Write(&page, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "r.name + ' (' + r.frontend + ')'") {
		t.Error("the page does not show the front end after the name")
	}
}
