package subagent

import (
	"context"

	"github.com/dshsim/dshsim/pipeline/delegation"
	"github.com/dshsim/dshsim/tools/jobs"
)

// startJob runs a one-shot child as a background job subagent-<n> of the
// caller: admission first (a refused start starts no child), then the
// child; a run that settled before the start returned settles the job at
// once (its notice precedes the call's result, as upstream's does).
func (t *instance) startJob(req Request) (string, error) {
	spec := jobs.Spec{Owner: req.Caller.Session.ID(), Kind: JobKind, Label: req.Label}
	if err := t.jobs.Admit(spec.Owner); err != nil {
		return "", err
	}
	ctx, cancel := context.WithCancel(context.Background())
	run, err := t.svc.Start(ctx, t.inst.Provider, req)
	if err != nil {
		cancel()
		return register(t.jobs.StartSettled(spec, jobs.Outcome{Status: jobs.StatusFailed, Detail: JSString(err)}))
	}
	select {
	case <-run.Done():
		o := settleJob(ctx, run)
		cancel()
		return register(t.jobs.StartSettled(spec, o))
	default:
	}
	return register(t.jobs.StartProducer(spec, func(jobCtx context.Context) jobs.Outcome {
		stop := context.AfterFunc(jobCtx, cancel)
		defer stop()
		defer cancel()
		return settleJob(ctx, run)
	}))
}

func register(j *jobs.Job, err error) (string, error) {
	if err != nil {
		return "", err
	}
	return j.ID(), nil
}

// settleJob waits for the run, disposes it and maps the result to the job's
// outcome as upstream's settleRun does: completed carries the output's
// text, aborted is killed, anything else failed with "<reason>[;
// diagnostic: <d>]" (no partial output); a run that failed outright or was
// cancelled is failed or killed; a disposal failure appends "dispose failed:
// <String(error)>".
func settleJob(ctx context.Context, run Run) jobs.Outcome {
	var o jobs.Outcome
	res, err := run.Result(ctx)
	switch {
	case err != nil && ctx.Err() != nil:
		o = jobs.Outcome{Status: jobs.StatusKilled}
	case err != nil:
		o = jobs.Outcome{Status: jobs.StatusFailed, Detail: JSString(err)}
	case res.Stop == delegation.StopCompleted:
		o = jobs.Outcome{Status: jobs.StatusCompleted, Output: delegation.OutputText(res.Output)}
	case res.Stop == delegation.StopAborted:
		o = jobs.Outcome{Status: jobs.StatusKilled}
	default:
		o = jobs.Outcome{Status: jobs.StatusFailed, Detail: delegation.JobDetail(res.Stop, res.Diagnostic)}
	}
	if derr := run.Dispose(); derr != nil {
		prefix := ""
		if o.Detail != "" {
			prefix = o.Detail + "; "
		}
		o = jobs.Outcome{Status: jobs.StatusFailed, Detail: prefix + "dispose failed: " + JSString(derr)}
	}
	return o
}
