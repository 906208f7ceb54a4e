package jobs

import (
	"context"
	"testing"
	"time"

	"github.com/dshsim/dshsim/internal/waittest"
)

// TestProducerJobs: a producer job (a one-shot background subagent) takes a
// "<kind>-<n>" id, reports its outcome's status and detail, returns its
// output on every read, is cancelled through job_kill's path, and one that
// settled before its start returned sends its notice before the start
// returns.
func TestProducerJobs(t *testing.T) {
	r, notices := newReg(t, Options{})
	release := make(chan struct{})
	j, err := r.StartProducer(Spec{Owner: "s", Kind: "subagent", Label: "open research"}, func(ctx context.Context) Outcome {
		<-release
		return Outcome{Status: StatusCompleted, Output: "FINDINGS"}
	})
	if err != nil {
		t.Fatal(err)
	}
	if j.ID() != "subagent-1" {
		t.Errorf("id %q", j.ID())
	}
	if rd := j.Read(); rd.Text() != "(no new output)\n[status: running]" {
		t.Errorf("running read: %q", rd.Text())
	}
	close(release)
	n := waittest.Recv(t, notices, "the producer job's notice")
	if n.Text != "background job subagent-1 (subagent: open research) finished [status: completed]. Read its output with job_output." {
		t.Errorf("notice: %q", n.Text)
	}
	for range 2 {
		if rd := j.Read(); rd.Text() != "FINDINGS\n[status: completed]" {
			t.Errorf("settled read: %q", rd.Text())
		}
	}

	killed, err := r.StartProducer(Spec{Owner: "s", Kind: "subagent", Label: "slow"}, func(ctx context.Context) Outcome {
		<-ctx.Done()
		return Outcome{Status: StatusKilled}
	})
	if err != nil {
		t.Fatal(err)
	}
	if !killed.Cancel("job_kill") {
		t.Fatal("a live producer was not cancelled")
	}
	if ok, _ := killed.WaitFor(context.Background(), 5*time.Second); !ok {
		t.Fatal("the cancelled producer did not settle")
	}
	if s, d := killed.StatusDetail(); s != StatusKilled || d != "" {
		t.Errorf("killed producer: %q %q", s, d)
	}

	done, err := r.StartSettled(Spec{Owner: "s", Kind: "subagent", Label: "diag"}, Outcome{Status: StatusFailed, Detail: "error; diagnostic: boom"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-notices:
		if n.JobID != "subagent-3" || n.Text != "background job subagent-3 (subagent: diag) finished [status: failed, error; diagnostic: boom]. Read its output with job_output." {
			t.Errorf("settled-at-start notice: %+v", n)
		}
	default:
		t.Fatal("a job settled at its start sent no notice before StartSettled returned")
	}
	if rd := done.Read(); rd.Text() != "(no new output)\n[status: failed, error; diagnostic: boom]" {
		t.Errorf("failed read: %q", rd.Text())
	}
}
