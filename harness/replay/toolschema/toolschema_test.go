package toolschema

import (
	"encoding/json"
	"strings"
	"testing"
)

// jobKill is upstream's job_kill schema, as a sidecar stores it.
const jobKill = `{
      "name": "job_kill",
      "description": "Request cancellation of a running background job by job id. Returns immediately; the job settles as killed once its work actually stops.",
      "parameters": {
        "type": "object",
        "properties": {
          "job_id": {"type": "string", "description": "Job id returned by the tool that started the background work."},
          "reason": {"type": "string", "description": "Optional short reason, recorded in the log and forwarded to the job."}
        },
        "required": ["job_id"]
      }
    }`

const params = `{"type":"object","properties":{"job_id":{"type":"string","description":"Job id returned by the tool that started the background work."},"reason":{"type":"string","description":"Optional short reason, recorded in the log and forwarded to the job."}},"required":["job_id"]}`

const desc = "Request cancellation of a running background job by job id. Returns immediately; the job settles as killed once its work actually stops."

func TestCompare(t *testing.T) {
	expected := []Expected{{Name: "job_kill", Raw: json.RawMessage(jobKill)}, {Name: "create_goal", Raw: json.RawMessage(`{"name":"create_goal","description":"x","parameters":{}}`)}}
	tests := []struct {
		name       string
		ours       []Schema
		mismatches []string // substrings, in order
	}{
		{name: "upstream's schema", ours: []Schema{{"job_kill", desc, json.RawMessage(params)}}},
		{name: "a changed description", ours: []Schema{{"job_kill", strings.Replace(desc, "immediately", "at once", 1), json.RawMessage(params)}},
			mismatches: []string{`job_kill: description: expected "Request cancellation`}},
		{name: "a changed parameter description", ours: []Schema{{"job_kill", desc, json.RawMessage(strings.Replace(params, "Optional short", "Short", 1))}},
			mismatches: []string{`job_kill: parameters.properties.reason.description: expected "Optional short reason`}},
		{name: "parameters in another key order", ours: []Schema{{"job_kill", desc, json.RawMessage(`{"type":"object","properties":{"reason":{"type":"string","description":"Optional short reason, recorded in the log and forwarded to the job."},"job_id":{"type":"string","description":"Job id returned by the tool that started the background work."}},"required":["job_id"]}`)}},
			mismatches: []string{"job_kill: parameters.properties: key order: expected [job_id reason], got [reason job_id]"}},
		{name: "a parameter missing", ours: []Schema{{"job_kill", desc, json.RawMessage(`{"type":"object","properties":{"job_id":{"type":"string","description":"Job id returned by the tool that started the background work."}},"required":["job_id"]}`)}},
			mismatches: []string{"job_kill: parameters.properties.reason: missing in ours"}},
		{name: "a parameter added", ours: []Schema{{"job_kill", desc, json.RawMessage(strings.Replace(params, `"required"`, `"additionalProperties":false,"required"`, 1))}},
			mismatches: []string{"job_kill: parameters.additionalProperties: not in the recording (ours: false)"}},
		{name: "a required list that differs", ours: []Schema{{"job_kill", desc, json.RawMessage(strings.Replace(params, `["job_id"]`, `["job_id","reason"]`, 1))}},
			mismatches: []string{`job_kill: parameters.required[1]: not in the recording (ours: "reason")`}},
		{name: "a tool the sidecar lacks", ours: []Schema{{"job_kill", desc, json.RawMessage(params)}, {"job_list", "List.", json.RawMessage(`{}`)}},
			mismatches: []string{"job_list: the stack composes it, but upstream's header does not list it"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := Compare(expected, tc.ours)
			if len(rep.Mismatches) != len(tc.mismatches) {
				t.Fatalf("mismatches %q, want %d like %q", rep.Mismatches, len(tc.mismatches), tc.mismatches)
			}
			for i, m := range tc.mismatches {
				if !strings.Contains(rep.Mismatches[i], m) {
					t.Errorf("mismatch %d = %q, want it to contain %q", i, rep.Mismatches[i], m)
				}
			}
			if strings.Join(rep.NotModelled, ",") != "create_goal" || strings.Join(rep.Compared, ",") != "job_kill" {
				t.Errorf("compared %v, not modelled %v", rep.Compared, rep.NotModelled)
			}
		})
	}
}

func TestSchemaJSONKeepsOrderAndText(t *testing.T) {
	s := Schema{Name: "x", Description: "a <b> & \"c\" — d", Parameters: json.RawMessage(`{"z":1,"a":2}`)}
	want := `{"name":"x","description":"a <b> & \"c\" — d","parameters":{"z":1,"a":2}}`
	if got := string(s.JSON()); got != want {
		t.Errorf("JSON() = %s, want %s", got, want)
	}
}
