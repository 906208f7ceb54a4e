package recording

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// notifications reads a JSON-RPC run's notifications.expected.jsonl and
// result.expected.json into r.Stream: the session.event records split
// into the session's (those that continue its log, seq and type) and its
// children's (in the order each child's first record came), the
// session's session.status values, and the final response.
func (l *loader) notifications(r *Recording) error {
	lr, done, err := l.lines(NotificationsFile)
	if err != nil {
		return err
	}
	s, err := parseNotifications(r.Name, lr, r.Events)
	done()
	if err != nil {
		return err
	}
	data, err := l.read(ResultExpectedFile)
	if err != nil {
		return err
	}
	var res struct {
		SessionID     *string `json:"sessionId"`
		FinalResponse *string `json:"finalResponse"`
	}
	if err := decodeStrict(data, &res); err != nil {
		return jsonError(r.Name, ResultExpectedFile, data, 0, err)
	}
	if res.FinalResponse == nil {
		return l.fail(ResultExpectedFile, 1, "finalResponse", "missing")
	}
	s.Result, s.ResultFile, s.ResultLine = StreamResult{Output: *res.FinalResponse}, ResultExpectedFile, 0
	r.Stream = s
	return nil
}

// parseNotifications decodes the notifications streamed by lr; root are
// the session's logged events, which its session.event records follow.
func parseNotifications(rec string, lr *lineReader, root []Event) (*Stream, error) {
	nf := &notifier{rec: rec, file: NotificationsFile, params: "params", root: root, s: &Stream{File: NotificationsFile}, start: -1}
	for {
		ln, err := lr.next()
		if errors.Is(err, io.EOF) {
			return nf.s, nil
		}
		if err != nil {
			return nil, err
		}
		if err := nf.take(ln, lr.n, ""); err != nil {
			return nil, err
		}
	}
}

// notifier files the notifications of one SDK run into a Stream: a
// JSON-RPC run's lines ({method, params}) or the Python SDK's
// result.json records ({method, payload}).
type notifier struct {
	rec, file string
	// params is the key of a record's payload: "params" (JSON-RPC) or
	// "payload" (the Python SDK).
	params string
	// root are the session's logged events, which its session.event
	// records follow.
	root []Event
	s    *Stream
	// kids are each child's next seq; start is where in root the
	// session's records start (-1: not yet known).
	kids  []int64
	start int
}

// take files one notification, the record raw at line; at is the
// record's path in its file ("" for a line of its own), which every
// field an error names starts with.
func (nf *notifier) take(raw []byte, line int, at string) error {
	fail := func(field, format string, args ...any) error {
		return &Error{Recording: nf.rec, File: nf.file, Line: line, Field: at + field, Problem: fmt.Sprintf(format, args...)}
	}
	var n map[string]*json.RawMessage
	if err := json.Unmarshal(raw, &n); err != nil {
		return under(jsonError(nf.rec, nf.file, raw, line, err), nf.file, trimDot(at))
	}
	var method *string
	if n["method"] != nil && json.Unmarshal(*n["method"], &method) != nil {
		return fail("method", "want string, got JSON %s", *n["method"])
	}
	var p *struct {
		Event  *json.RawMessage `json:"event"`
		Status *string          `json:"status"`
	}
	if n[nf.params] != nil {
		if err := json.Unmarshal(*n[nf.params], &p); err != nil {
			return under(jsonError(nf.rec, nf.file, *n[nf.params], line, err), nf.file, at+nf.params)
		}
	}
	switch {
	case method == nil:
		return fail("method", "missing")
	case p == nil:
		return fail(nf.params, "missing")
	}
	switch *method {
	case "session.status":
		if p.Status == nil || (*p.Status != "running" && *p.Status != "idle") {
			return fail(nf.params+".status", "want \"running\" or \"idle\", got %s", show(p.Status))
		}
		nf.s.Statuses = append(nf.s.Statuses, *p.Status)
	case "subagent.started", "subagent.finished":
		nf.s.Subagents++
	case "session.event":
		if p.Event == nil {
			return fail(nf.params+".event", "missing")
		}
		evs, err := parseLine(nf.rec, *p.Event, line, false, -1, nil)
		if err != nil {
			return under(err, nf.file, at+nf.params+".event")
		}
		if nf.start < 0 && len(nf.root) > 0 {
			nf.start = indexOfSeq(nf.root, evs[0])
		}
		nf.kids = nf.s.place(evs[0], nf.root[max(nf.start, 0):], nf.kids)
	default:
		return fail("method", "want session.event, session.status, subagent.started or subagent.finished, got %q", *method)
	}
	return nil
}

// under is err (an *Error raised against a value inside file) with its
// file set and its field put under path, the value's place in the file
// ("": the field stays).
func under(err error, file, path string) error {
	var e *Error
	if !errors.As(err, &e) {
		return err
	}
	c := *e
	c.File = file
	switch {
	case path == "":
	case c.Field == "":
		c.Field = path
	default:
		c.Field = path + "." + c.Field
	}
	return &c
}

// trimDot is a record's path without its trailing dot.
func trimDot(at string) string { return strings.TrimSuffix(at, ".") }

// place files e with the session's events when it continues the session's
// log (the next seq, of that type), else with the child whose next seq it
// is (a new child when none), and returns the children's next seqs.
func (s *Stream) place(e Event, root []Event, kids []int64) []int64 {
	if i := len(s.Events); i < len(root) && root[i].Seq == e.Seq && root[i].Type == e.Type {
		s.Events = append(s.Events, e)
		return kids
	}
	for i, next := range kids {
		if next == e.Seq {
			s.Children[i] = append(s.Children[i], e)
			kids[i] = e.Seq + 1
			return kids
		}
	}
	s.Children = append(s.Children, []Event{e})
	return append(kids, e.Seq+1)
}

// indexOfSeq is the index of root's event of e's seq and type (-1: none).
func indexOfSeq(root []Event, e Event) int {
	for i, r := range root {
		if r.Seq == e.Seq && r.Type == e.Type {
			return i
		}
	}
	return -1
}
