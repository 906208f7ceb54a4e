package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/dshsim/dshsim/harness/replay/fixture"
	"github.com/dshsim/dshsim/harness/replay/recording"
)

// HeadlessInputError says why a scenario cannot be recorded as a headless
// run (nil when it can): the unattended path submits one task, so its
// input.json has one prompt step (beside initialize and newSession), and
// it has no approval channel, so no permission answers (an ask is decided
// unavailable, as upstream's headless profile decides it).
func HeadlessInputError(in recording.Input) error {
	var why []string
	prompts := 0
	for _, st := range in.Steps {
		switch st.Op {
		case "initialize", "newSession":
		case "prompt":
			prompts++
		default:
			why = append(why, fmt.Sprintf("step %q is not a headless run's (it submits one task and waits)", st.Op))
		}
	}
	if prompts != 1 {
		why = append(why, fmt.Sprintf("%d prompt steps, want 1 (a headless run is one task)", prompts))
	}
	if len(in.PermissionAnswers) > 0 {
		why = append(why, "permissionAnswers given, but the headless path has no approval channel (an ask is decided unavailable)")
	}
	if len(why) == 0 {
		return nil
	}
	return errors.New(strings.Join(why, "; "))
}

// headlessFiles are the files of a headless recording besides input.json,
// workspace/ and projection.expected.json: session.jsonl as an ACP
// recording stores it, and stream-json.expected.jsonl, what upstream's
// headless driver streams: one {type: "session_event", sessionId, event}
// record per event from the prompt's splice on, times zeroed and the
// session id a token as upstream's suite normalises them, then the result
// record (the last assistant text, the usage summed over the steps).
func headlessFiles(log []byte, run *runFacts) (map[string][]byte, error) {
	files, err := fixtureFiles(log, nil, run, false)
	if err != nil {
		return nil, err
	}
	delete(files, recording.StdoutFile)
	up, err := fixture.Upstream(log)
	if err == nil {
		up, err = fixture.TokenizeCwd(up)
	}
	if err == nil {
		up, err = fixture.ScrubHeaders(up)
	}
	if err != nil {
		return nil, err
	}
	_, evs, err := recording.ParseSession("", recording.SessionFile, up)
	if err != nil {
		return nil, fmt.Errorf("our log: %w", err)
	}
	streamed := fromPromptSplice(evs)
	if len(streamed) == 0 {
		return nil, errors.New("our log holds no event to stream")
	}
	lines := bytes.Split(up, []byte("\n"))
	id := []byte(run.SessionID)
	var b bytes.Buffer
	for _, e := range streamed {
		ln := zeroTime.ReplaceAll(lines[e.Line-1], []byte("${1}0"))
		fmt.Fprintf(&b, `{"type":"session_event","sessionId":"{{sessionId}}","event":%s}`+"\n", bytes.ReplaceAll(ln, id, []byte("{{sessionId}}")))
	}
	res := streamResult(streamed)
	out, err := json.Marshal(struct {
		Type      string         `json:"type"`
		SessionID string         `json:"sessionId"`
		Output    string         `json:"output"`
		Usage     map[string]int `json:"usage,omitempty"`
	}{"result", "{{sessionId}}", res.Output, res.Usage})
	if err != nil {
		return nil, err
	}
	b.Write(append(out, '\n'))
	files[recording.StreamFile] = b.Bytes()
	return files, nil
}

// zeroTime matches the head of an event line as our log writes it, up to
// its time.
var zeroTime = regexp.MustCompile(`^(\{"type":"[^"]*","seq":[0-9]+,"time":)[0-9]+`)
