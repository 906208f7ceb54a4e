package junitreport

import (
	"encoding/xml"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/dshsim/dshsim/harness/replay"
)

// Suite is the name of the one test suite (and the classname's prefix).
const Suite = "dsh-replay"

type testsuites struct {
	XMLName  xml.Name  `xml:"testsuites"`
	Name     string    `xml:"name,attr"`
	Tests    int       `xml:"tests,attr"`
	Failures int       `xml:"failures,attr"`
	Errors   int       `xml:"errors,attr"`
	Time     string    `xml:"time,attr"`
	Suite    testsuite `xml:"testsuite"`
}

type testsuite struct {
	Name      string     `xml:"name,attr"`
	Tests     int        `xml:"tests,attr"`
	Failures  int        `xml:"failures,attr"`
	Errors    int        `xml:"errors,attr"`
	Skipped   int        `xml:"skipped,attr"`
	Time      string     `xml:"time,attr"`
	Timestamp string     `xml:"timestamp,attr"`
	Cases     []testcase `xml:"testcase"`
}

type testcase struct {
	Name      string   `xml:"name,attr"`
	Classname string   `xml:"classname,attr"`
	Time      string   `xml:"time,attr"`
	Failure   *problem `xml:"failure,omitempty"`
	Error     *problem `xml:"error,omitempty"`
	SystemOut string   `xml:"system-out,omitempty"`
}

type problem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// Write writes the JUnit document for results of a run that started at
// start and took elapsed.
func Write(w io.Writer, results []*replay.Result, start time.Time, elapsed time.Duration) error {
	c := replay.Count(results)
	suite := testsuite{Name: Suite, Tests: c.Total, Failures: c.Mismatch, Errors: c.Error,
		Time: seconds(elapsed), Timestamp: start.UTC().Format("2006-01-02T15:04:05")}
	for _, r := range results {
		suite.Cases = append(suite.Cases, testCase(r))
	}
	doc := testsuites{Name: Suite, Tests: c.Total, Failures: c.Mismatch, Errors: c.Error, Time: suite.Time, Suite: suite}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// testCase is the test case of one recording.
func testCase(r *replay.Result) testcase {
	tc := testcase{Name: r.Name, Classname: classname(r.Dir, r.Frontend), Time: seconds(r.Duration)}
	switch r.Verdict {
	case replay.Match:
	case replay.Failed:
		tc.Error = &problem{Message: r.FirstDifference(), Type: replay.Failed, Text: r.Error}
	default:
		tc.Failure = &problem{Message: r.FirstDifference(), Type: replay.Mismatch, Text: r.Detail()}
	}
	var out strings.Builder
	for _, n := range r.Notes {
		fmt.Fprintf(&out, "note: %s\n", n)
	}
	if len(r.Served) > 0 {
		fmt.Fprintf(&out, "served from the recording: %s\n", strings.Join(r.Served, ", "))
	}
	tc.SystemOut = out.String()
	return tc
}

// classname is "dsh-replay.<directory holding the recording>", or
// "dsh-replay" when that directory has no name; a recording of a front
// end beyond ACP has its front end after the suite
// ("dsh-replay.headless.snapshots").
func classname(dir, frontend string) string {
	prefix := Suite
	if frontend != "" {
		prefix += "." + frontend
	}
	parent := filepath.Base(filepath.Dir(filepath.Clean(dir)))
	if parent == "." || parent == ".." || parent == string(filepath.Separator) {
		return prefix
	}
	return prefix + "." + parent
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
