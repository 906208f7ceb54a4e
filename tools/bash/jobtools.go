package bash

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/render"
	"github.com/dshsim/dshsim/tools/jobs"
)

// Job tool texts. Upstream's tool-jobs descriptions are not quoted by any
// spec we hold; these are ours. The results (status line, kill
// acknowledgement) are VERBATIM.
const (
	JobOutputDescription = "Read the output a background job produced since the last read, with its status."
	JobKillDescription   = "Stop a background job (SIGTERM to its process group, then SIGKILL)."
	JobIDDescription     = "The job id, e.g. bash-1."
)

var jobParams = json.RawMessage(`{"type":"object","properties":{"job_id":{"type":"string","description":"` + JobIDDescription + `"}},"required":["job_id"]}`)

// JobTools returns job_output and job_kill over reg. A call only sees the
// jobs of its own session; each job renders with the escalation setting of
// the tool that started it.
func JobTools(reg *jobs.Registry) []pipeline.Tool {
	get := func(call *pipeline.Call) (*jobs.Job, error) {
		var a struct {
			JobID string `json:"job_id"`
		}
		if err := call.DecodeArgs(&a); err != nil || strings.TrimSpace(a.JobID) == "" {
			return nil, errors.New("invalid job_id: expected a non-empty string")
		}
		if reg == nil {
			return nil, ErrNoJobs
		}
		j, ok := reg.Get(call.SessionID(), a.JobID)
		if !ok {
			return nil, fmt.Errorf("unknown job %q", a.JobID)
		}
		return j, nil
	}
	return []pipeline.Tool{
		{Name: "job_output", Description: JobOutputDescription, Parameters: jobParams, Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
			j, err := get(call)
			if err != nil {
				return pipeline.Output{}, err
			}
			rd := j.Read()
			return output(rd.Text(), map[string]any{"jobId": j.ID, "status": rd.Status, "detail": rd.Detail}), nil
		}},
		{Name: "job_kill", Description: JobKillDescription, Parameters: jobParams, Run: func(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
			j, err := get(call)
			if err != nil {
				return pipeline.Output{}, err
			}
			j.Stop("job_kill")
			return output(render.KillRequested(j.ID), map[string]any{"jobId": j.ID}), nil
		}},
	}
}
