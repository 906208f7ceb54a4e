package htmlreport_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/dshsim/dshsim/harness/replay"
	"github.com/dshsim/dshsim/harness/replay/htmlreport"
)

const chromium = "/usr/bin/chromium"

// TestPageShowsVerdictsInHeadlessChromium writes the report of a real run
// (upstream recordings, a mismatching and a bad recording) and loads it in
// headless Chromium: after the page's script ran, every recording shows the
// verdict the replay reached, and mismatching rows are highlighted.
func TestPageShowsVerdictsInHeadlessChromium(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		t.Skip("chromium is not installed (Debian package: chromium; apt-get install -y chromium): " + err.Error())
	}
	root := "../../.."
	var dirs []string
	for _, d := range []string{"transcripts/fs-read", "transcripts/fs-edit", "transcripts/escalation-rejected",
		"testdata/replay/flagged/changed-seed", "testdata/replay/bad/unknown-event-type"} {
		dirs = append(dirs, filepath.Join(root, d))
	}
	results := replay.Run(context.Background(), dirs, replay.RunOptions{Parallel: 2})
	want := map[string]string{}
	kinds := map[string]bool{}
	for _, r := range results {
		want[r.Name] = r.Verdict
		kinds[r.Verdict] = true
	}
	if !kinds[replay.Mismatch] || !kinds[replay.Failed] {
		t.Fatalf("the run must contain a mismatch and an error to check the page: %v", want)
	}

	tmp := t.TempDir()
	page := filepath.Join(tmp, "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := htmlreport.Write(f, results); err != nil {
		t.Fatal(err)
	}
	f.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(tmp, "profile"), "--dump-dom", "file://"+page)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}

	sections := regexp.MustCompile(`<section class="recording" data-name="([^"]+)" data-verdict="([^"]+)">`).FindAllSubmatch(dom, -1)
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
	summary := regexp.MustCompile(`id="summary" data-match="(\d+)" data-mismatch="(\d+)" data-error="(\d+)"`).FindSubmatch(dom)
	if summary == nil {
		t.Fatalf("no rendered summary in the page")
	}
	c := replay.Count(results)
	for i, n := range []int{c.Match, c.Mismatch, c.Error} {
		if g, _ := strconv.Atoi(string(summary[i+1])); g != n {
			t.Errorf("summary field %d shows %d, want %d", i, g, n)
		}
	}
	if !bytes.Contains(dom, []byte(`<tr class="mismatch">`)) {
		t.Error("no mismatching row is highlighted")
	}
	if bytes.Contains(dom, []byte(`<p class="flag">report verdict`)) {
		t.Error("the page's verdict disagrees with the replay's")
	}
}

// TestDataNamesServedTools: the page's data carries, per recording, the
// tools whose bodies were served from the recording.
func TestDataNamesServedTools(t *testing.T) {
	data, err := htmlreport.Data([]*replay.Result{{Name: "cordis-inspect-jsdoc", Verdict: replay.Match, Served: []string{"cordis_inspect_query"}}, {Name: "fs-read", Verdict: replay.Match}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"name":"cordis-inspect-jsdoc"`)) || !bytes.Contains(data, []byte(`"served":["cordis_inspect_query"]`)) || !bytes.Contains(data, []byte(`"served":null`)) {
		t.Fatalf("data %s", data)
	}
}
