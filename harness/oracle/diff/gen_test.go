package diff

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/oracle"
)

// cases are the first n cases of a few seeds.
func cases(n int) []*Case {
	var out []*Case
	for _, seed := range []uint64{1, 2, 3} {
		for i := range n {
			out = append(out, Generate(seed, i))
		}
	}
	return out
}

// TestGenerateIsDeterministic: a case is the same every time it is made,
// alone or after others; other indices and seeds give other scripts.
func TestGenerateIsDeterministic(t *testing.T) {
	a, b := Generate(7, 3), Generate(7, 3)
	if !bytes.Equal(a.Script.JSON(), b.Script.JSON()) || a.Settings != b.Settings || a.Name != "gen-7-3" {
		t.Fatalf("Generate(7, 3) differs between two calls:\n%s\n%s", a.Script.JSON(), b.Script.JSON())
	}
	seen := map[string]bool{}
	for _, c := range cases(40) {
		seen[string(c.Script.JSON())+c.Settings.String()] = true
	}
	if len(seen) < 110 {
		t.Errorf("120 cases make only %d distinct scripts", len(seen))
	}
}

// TestGeneratedScriptsEncode: every case is a usable script, in code mode
// calls only run_code at top level, and session-query calls only where the
// tools are mounted.
func TestGeneratedScriptsEncode(t *testing.T) {
	for _, c := range cases(150) {
		if _, err := c.Script.Encode(); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		for _, call := range allCalls(c.Script) {
			switch {
			case c.Settings.ToolsMode == oracle.ToolsCode && call.Name != "run_code":
				t.Errorf("%s: code mode, but a top-level %s call", c.Name, call.Name)
			case c.Settings.ToolsMode == "" && call.Name == "run_code":
				t.Errorf("%s: native mode, but a run_code call", c.Name)
			case strings.HasPrefix(call.Name, "session_") && !c.Settings.SessionQuery:
				t.Errorf("%s: %s without the session-query tools", c.Name, call.Name)
			}
		}
	}
}

// TestGeneratorCoversEveryArea: over a few hundred cases every area and
// every profile is generated.
func TestGeneratorCoversEveryArea(t *testing.T) {
	areas, profiles := map[string]int{}, map[string]int{}
	for _, c := range cases(150) {
		profiles[c.Profile]++
		for _, a := range c.Areas {
			areas[a]++
		}
	}
	for _, a := range Areas {
		if areas[a] == 0 {
			t.Errorf("area %s never generated", a)
		}
	}
	for _, p := range profiles_() {
		if profiles[p.name] == 0 {
			t.Errorf("profile %s never generated", p.name)
		}
	}
}

func profiles_() []profile { return profiles() }

// TestGeneratorAvoidsRacyOrderings: what races in upstream's own runs is
// never generated.
func TestGeneratorAvoidsRacyOrderings(t *testing.T) {
	unawaited := regexp.MustCompile(`(^|[^t] )tools\.[a-z_]+\(`) // a nested call without "await " before it
	for _, c := range cases(150) {
		s := c.Script
		for _, turn := range s.Turns {
			for i, st := range turn {
				hooked := s.Workspace["hooks.json"] != "" || s.Workspace["codex-hooks.json"] != ""
				if len(st.Calls) > 1 && hooked {
					t.Errorf("%s: parallel calls under hooks", c.Name)
				}
				for _, call := range st.Calls {
					args := argsOf(t, call)
					checkCall(t, c, args, call.Name, unawaited)
					if call.Name == "bash" && args["run_in_background"] == true {
						checkJobFollowUp(t, c, turn[i+1:], args)
					}
				}
			}
		}
	}
}

func checkCall(t *testing.T, c *Case, args map[string]any, name string, unawaited *regexp.Regexp) {
	t.Helper()
	if p, ok := args["sandbox_permissions"].(string); ok && (p == c.Settings.Mode || p == oracle.DangerFullAccess && c.Settings.Mode == "") {
		t.Errorf("%s: an escalation to the current mode %q (a named departure)", c.Name, p)
	}
	if ms, ok := args["timeoutMs"].(float64); ok && ms > 0 && ms < 100 && args["command"] != "sleep 1.5; echo NEVER" {
		t.Errorf("%s: a %vms timeout on %q, which prints before it could expire", c.Name, ms, args["command"])
	}
	if code, ok := args["code"].(string); ok && name == "run_code" {
		if strings.Contains(code, "Promise.all") || unawaited.MatchString(code) {
			t.Errorf("%s: a nested call that is not awaited alone: %s", c.Name, code)
		}
	}
}

// checkJobFollowUp: a background start that spawns is read by a wait, or
// killed and waited for, or followed by a call that awaits I/O, before the
// turn ends.
func checkJobFollowUp(t *testing.T, c *Case, rest []oracle.Step, start map[string]any) {
	t.Helper()
	if start["workdir"] == "a.txt" {
		return // refused at once: no job
	}
	for _, st := range rest {
		for _, call := range st.Calls {
			args := argsOf(t, call)
			if call.Name == "job_output" && args["wait"] == true || call.Name == "bash" && args["run_in_background"] != true || call.Name == "read" {
				return
			}
		}
	}
	if c.Profile != "cancel" { // the cancelled turn ends with the job's wait
		t.Errorf("%s: background job %q is neither waited for nor seen before the turn ends", c.Name, start["command"])
	}
}

func argsOf(t *testing.T, c oracle.Call) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(c.Args, &m); err != nil {
		t.Fatalf("%s arguments %s: %v", c.Name, c.Args, err)
	}
	return m
}

func allCalls(s *oracle.Script) []oracle.Call {
	var out []oracle.Call
	for _, t := range s.Turns {
		for _, st := range t {
			out = append(out, st.Calls...)
		}
	}
	return out
}

// TestCancelledHookFiresOnce: the hook that lets the user cancel fires on
// the cancelled call only (a hook that fired earlier would cancel another
// call, and every later one would sleep in it).
func TestCancelledHookFiresOnce(t *testing.T) {
	n := 0
	for _, c := range cases(150) {
		if c.Profile != "cancel" || !strings.Contains(c.Script.Workspace["hooks.json"], "touch started.txt") {
			continue
		}
		n++
		first := c.Script.Turns[0]
		for i, st := range first {
			for _, call := range st.Calls {
				if call.Name == "write" && i != len(first)-1 {
					t.Errorf("%s: a write before the cancelled one meets the hook", c.Name)
				}
			}
		}
		for _, st := range c.Script.Turns[1] {
			for _, call := range st.Calls {
				if call.Name == "write" {
					t.Errorf("%s: a write after the cancellation meets the hook", c.Name)
				}
			}
		}
		if last := first[len(first)-1].Calls; len(last) != 1 || last[0].Name != "write" {
			t.Errorf("%s: the cancelled call is %v, not the hooked write", c.Name, last)
		}
	}
	if n == 0 {
		t.Fatal("no case cancels in a hook")
	}
}

// TestEveryCaseMountsTheReminder: our stack always composes the
// repeated-call reminder, so upstream's run of every case mounts it too (a
// hooks case writing one file three times differed for that alone).
func TestEveryCaseMountsTheReminder(t *testing.T) {
	for i := range 200 {
		if c := Generate(5, i); !c.Settings.Reminder {
			t.Fatalf("%s (%s profile) runs upstream without the reminder", c.Name, c.Profile)
		}
	}
}

// TestRetryAfterCases: the retry-after profile's prompts each expect the
// error their turn ends in (a failure not retried is the turn's last
// call: a code the policy does not retry, a Retry-After over its cap,
// 1e999), and a case holding 1e999 is played from replay.override.json,
// one entry per model call (upstream's refreshed log cannot hold the
// number). Planted bugs caught: the override missing or cut at the
// wrong chunk, a failing turn's prompt not expecting its error.
func TestRetryAfterCases(t *testing.T) {
	infinite := 0
	for i := range 600 {
		c := Generate(33, i)
		if c.Profile != "retry-after" {
			continue
		}
		s := c.Script
		finishes := 0
		for k, turn := range s.Turns {
			chunks := turn[0].Chunks
			last := string(chunks[len(chunks)-1])
			fails := strings.Contains(last, `"kind": "error"`)
			if want := map[bool]string{true: "promptExpectError", false: "prompt"}[fails]; s.Steps[k].Op != want {
				t.Errorf("%s turn %d: op %s, its last chunk %s", c.Name, k+1, s.Steps[k].Op, last)
			}
			for j, ch := range chunks {
				if strings.Contains(string(ch), `"type": "finish"`) || strings.Contains(string(ch), `"type":"finish"`) {
					finishes++
				}
				retried := !strings.Contains(string(ch), "AUTH") && !strings.Contains(string(ch), "1e999")
				for _, over := range []string{"100.5", "1e6", "1e308"} {
					retried = retried && !strings.Contains(string(ch), `"providerRetryAfterMs": `+over+"}")
				}
				if j < len(chunks)-1 && strings.Contains(string(ch), `"kind": "error"`) && !retried {
					t.Errorf("%s turn %d: a failure the policy does not retry is followed by more calls: %s", c.Name, k+1, ch)
				}
			}
		}
		holds := strings.Contains(string(s.JSON()), "1e999")
		if !holds {
			if s.Override != nil {
				t.Errorf("%s: an override without 1e999", c.Name)
			}
			continue
		}
		infinite++
		var entries []struct {
			Kind   string            `json:"kind"`
			Chunks []json.RawMessage `json:"chunks"`
		}
		if err := json.Unmarshal(bytes.ReplaceAll(s.Override, []byte("1e999"), []byte("1")), &entries); err != nil || len(entries) != finishes {
			t.Errorf("%s: override of %d entries (%v), want one per model call (%d)", c.Name, len(entries), err, finishes)
		}
		for _, e := range entries {
			if last := string(e.Chunks[len(e.Chunks)-1]); e.Kind != "chunks" || !strings.Contains(last, "finish") {
				t.Errorf("%s: an override entry that does not end in its finish: %s", c.Name, last)
			}
		}
	}
	if infinite == 0 {
		t.Error("no case of 600 holds 1e999")
	}
}
