package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/dshsim/dshsim/render"
	"github.com/dshsim/dshsim/sandbox"
)

// Settled is how a process ended.
type Settled struct {
	// Outcome is the exit code, or the signal, or "killed before exit".
	Outcome render.Outcome
	// Sandbox holds the sandbox facts of the run; nil when unconfined.
	Sandbox *sandbox.Report
	// Err is set when the command never ran (a runner or start failure).
	Err error
}

// Process is a started process as the registry sees it.
type Process interface {
	// Wait blocks until the process settled and its output is complete.
	Wait() Settled
	// Kill asks the process group to terminate (SIGTERM, then SIGKILL after
	// a grace period); it returns at once and is safe to call repeatedly.
	Kill()
}

// OutputOwner is implemented by a Process that captures its own output (for
// example one started by sandbox/spawn); the job then reads from it instead
// of from the writers it passed to the [Spawner].
type OutputOwner interface {
	// Streams returns the retained streams (the tails and full-output paths).
	Streams() (stdout, stderr render.Stream)
	// Since returns the text of stream (Stdout or Stderr) written after
	// cursor, the new cursor, and whether some of it is no longer in memory
	// (then the retained tail is returned).
	Since(stream StreamID, cursor int64) (text string, next int64, lost bool)
}

// StreamID names one output stream.
type StreamID int

// The two streams.
const (
	Stdout StreamID = iota
	Stderr
)

// Spawner starts the process with its output streams connected to stdout
// and stderr (a Process that implements [OutputOwner] may ignore them). An
// error means nothing was started.
type Spawner func(stdout, stderr io.Writer) (Process, error)

// Notice is the completion message of a promoted job.
type Notice struct {
	// Owner is the job's owner (session id).
	Owner string
	// JobID is e.g. "bash-1".
	JobID string
	// Kind is e.g. "bash"; Label is the command.
	Kind, Label string
	// Status and Detail are the rendered status and detail.
	Status, Detail string
	// Text is the VERBATIM notice sent to the owner.
	Text string
}

// Options configure a registry.
type Options struct {
	// Notify receives one notice per promoted job when it settles. It is
	// called from the job's own goroutine; nil drops notices.
	Notify func(Notice)
	// MaxOutputBytes is the per-stream in-memory tail (default 64000).
	MaxOutputBytes int
	// SpillCapBytes bounds a stream's full-output file (default 64 MiB).
	SpillCapBytes int64
	// OutputDir is where full-output files go; "" means a private
	// mkdtemp(<tmpdir>/dsh-subprocess-) created on first use.
	OutputDir string
	// MaxJobs bounds the live jobs per owner; 0 means unlimited.
	MaxJobs int
	// EscalationAdvertised is the default of [Spec.EscalationAdvertised] for [Registry.Start].
	EscalationAdvertised bool
}

// Spec describes a job to launch.
type Spec struct {
	// Owner is the owning session id; Kind the job kind ("bash"); Label the command.
	Owner, Kind, Label string
	// Background sends a completion notice when the job settles.
	Background bool
	// EscalationAdvertised adds the escalation hint after a denial marker in
	// this job's reads, detail and notice (the tool that started it advertises
	// escalation).
	EscalationAdvertised bool
}

// ErrFull is returned by Start when the owner has MaxJobs live jobs.
var ErrFull = errors.New("jobs: too many live jobs for this owner")

// Registry tracks the jobs of every owner. It is safe for concurrent use.
type Registry struct {
	opts Options

	mu     sync.Mutex
	jobs   map[string]map[string]*Job // owner -> id -> job
	counts map[string]map[string]int  // owner -> kind -> last n
	dirMu  sync.Mutex
	dir    string
	closed bool
}

// New returns an empty registry.
func New(opts Options) *Registry {
	if opts.MaxOutputBytes <= 0 {
		opts.MaxOutputBytes = 64000
	}
	if opts.SpillCapBytes <= 0 {
		opts.SpillCapBytes = 64 << 20
	}
	return &Registry{opts: opts, jobs: map[string]map[string]*Job{}, counts: map[string]map[string]int{}, dir: opts.OutputDir}
}

func (r *Registry) outputDir() (string, error) {
	r.dirMu.Lock()
	defer r.dirMu.Unlock()
	if r.dir == "" {
		d, err := os.MkdirTemp("", "dsh-subprocess-")
		if err != nil {
			return "", err
		}
		r.dir = d
	}
	return r.dir, nil
}

// Job is one registered process.
type Job struct {
	// ID is "<kind>-<n>", unique per owner.
	ID string
	// Owner is the owning session id.
	Owner string
	// Kind is the job kind ("bash"); Label is the command.
	Kind, Label string
	// Started is when the job was registered.
	Started time.Time

	r              *Registry
	hint           bool
	stdout, stderr *Capture
	proc           Process
	done           chan struct{}

	mu            sync.Mutex
	settled       Settled
	isDone        bool
	background    bool
	notified      bool
	killRequested bool
	stopReason    string

	readMu    sync.Mutex // serialises reads (the cursors)
	cursorOut int64
	cursorErr int64
}

// Start registers a job for owner and starts it with spawn. The job runs
// until it settles, whatever happens to the call that started it. A spawn
// error unregisters the job and is returned unchanged.
func (r *Registry) Start(owner, kind, label string, background bool, spawn Spawner) (*Job, error) {
	return r.Launch(Spec{Owner: owner, Kind: kind, Label: label, Background: background, EscalationAdvertised: r.opts.EscalationAdvertised}, spawn)
}

// Launch is [Registry.Start] with every option of spec.
func (r *Registry) Launch(spec Spec, spawn Spawner) (*Job, error) {
	owner, kind, label, background := spec.Owner, spec.Kind, spec.Label, spec.Background
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, errors.New("jobs: registry closed")
	}
	if r.opts.MaxJobs > 0 && r.liveLocked(owner) >= r.opts.MaxJobs {
		r.mu.Unlock()
		return nil, ErrFull
	}
	if r.counts[owner] == nil {
		r.counts[owner] = map[string]int{}
		r.jobs[owner] = map[string]*Job{}
	}
	r.counts[owner][kind]++
	j := &Job{
		ID: kind + "-" + strconv.Itoa(r.counts[owner][kind]), Owner: owner, Kind: kind, Label: label, Started: time.Now(),
		r: r, background: background, hint: spec.EscalationAdvertised, done: make(chan struct{}),
	}
	j.stdout = NewCapture(r.opts.MaxOutputBytes, r.opts.SpillCapBytes, r.outputDir, j.ID+"-stdout")
	j.stderr = NewCapture(r.opts.MaxOutputBytes, r.opts.SpillCapBytes, r.outputDir, j.ID+"-stderr")
	r.jobs[owner][j.ID] = j
	r.mu.Unlock()

	proc, err := spawn(j.stdout, j.stderr)
	if err != nil {
		r.remove(j)
		return nil, err
	}
	j.mu.Lock()
	j.proc = proc
	killed := j.killRequested
	j.mu.Unlock()
	if killed { // job_kill reached the job while it was being spawned
		proc.Kill()
	}
	go j.run()
	return j, nil
}

func (j *Job) run() {
	j.mu.Lock()
	p := j.proc
	j.mu.Unlock()
	s := p.Wait()
	j.stdout.Close()
	j.stderr.Close()
	j.mu.Lock()
	j.settled, j.isDone = s, true
	close(j.done)
	send := j.noticeDue()
	j.mu.Unlock()
	if send {
		j.notify()
	}
}

// noticeDue reports whether the completion notice is to be sent now (a
// background job that settled and was not announced yet) and marks it sent.
// Call with j.mu held.
func (j *Job) noticeDue() bool {
	send := j.background && j.isDone && !j.notified
	if send {
		j.notified = true
	}
	return send
}

// liveLocked counts owner's jobs that have not settled (r.mu held).
func (r *Registry) liveLocked(owner string) int {
	n := 0
	for _, j := range r.jobs[owner] {
		select {
		case <-j.done:
		default:
			n++
		}
	}
	return n
}

func (j *Job) notify() {
	if j.r.opts.Notify == nil {
		return
	}
	defer func() {
		if v := recover(); v != nil { // a broken receiver must not take the process down
			log.Printf("jobs: the completion notice of %s (owner %s) was lost: Notify panicked: %v", j.ID, j.Owner, v)
		}
	}()
	status, detail := j.statusDetail()
	j.r.opts.Notify(Notice{
		Owner: j.Owner, JobID: j.ID, Kind: j.Kind, Label: j.Label, Status: status, Detail: detail,
		Text: render.CompletionNotice(j.ID, j.Kind, j.Label, status, detail),
	})
}

// WaitFor waits until the job settled (true), timeout expired (false) or ctx
// was cancelled (false, ctx.Err()). It never kills the job.
func (j *Job) WaitFor(ctx context.Context, timeout time.Duration) (bool, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-j.done:
		return true, nil
	case <-t.C:
		return false, nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// Done is closed when the job settled.
func (j *Job) Done() <-chan struct{} { return j.done }

// Promote turns a foreground job into a background job: it keeps running and
// a completion notice is sent when it settles (at once if it already has).
func (j *Job) Promote() {
	j.mu.Lock()
	j.background = true
	send := j.noticeDue()
	j.mu.Unlock()
	if send {
		j.notify()
	}
}

// Forget removes a settled foreground job's record; no notice is sent.
func (j *Job) Forget() { j.r.remove(j) }

func (r *Registry) remove(j *Job) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m := r.jobs[j.Owner]; m != nil && m[j.ID] == j {
		delete(m, j.ID)
	}
}

// Kill asks the job's process group to terminate (the caller's own kill: a
// timeout or an abort of the call that started it). It returns at once.
func (j *Job) Kill() { j.Stop("") }

// Stop asks the job's process group to terminate because of something outside
// the call that started it (job_kill, shutdown) and records why; the first
// non-empty reason is kept. It returns at once.
func (j *Job) Stop(reason string) {
	j.mu.Lock()
	j.killRequested = true
	if j.stopReason == "" {
		j.stopReason = reason
	}
	p := j.proc
	j.mu.Unlock()
	if p != nil {
		p.Kill()
	}
}

// StopReason returns the reason given to Stop, "" when the job was not
// stopped from outside.
func (j *Job) StopReason() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.stopReason
}

// KillRequested reports whether Kill was called.
func (j *Job) KillRequested() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.killRequested
}

// Settled returns the settle facts and whether the job has settled.
func (j *Job) Settled() (Settled, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.settled, j.isDone
}

// owner returns the process when it captures its own output.
func (j *Job) owner() OutputOwner {
	j.mu.Lock()
	defer j.mu.Unlock()
	o, _ := j.proc.(OutputOwner)
	return o
}

// Streams returns the retained stdout and stderr as render streams.
func (j *Job) Streams() (stdout, stderr render.Stream) {
	if o := j.owner(); o != nil {
		return o.Streams()
	}
	t, tr, p := j.stdout.Tail()
	stdout = render.Stream{Text: t, Truncated: tr, FullPath: p}
	t, tr, p = j.stderr.Tail()
	stderr = render.Stream{Text: t, Truncated: tr, FullPath: p}
	return
}

func (j *Job) statusDetail() (string, string) {
	j.mu.Lock()
	s, done := j.settled, j.isDone
	j.mu.Unlock()
	if !done {
		return render.StatusRunning, ""
	}
	return s.Outcome.Status(), render.JobDetail(s.Outcome, s.Sandbox, j.hint)
}

// Read is one incremental read of a job.
type Read struct {
	// Delta is the new output and notes since the previous read.
	Delta render.Delta
	// Status and Detail describe the job now.
	Status, Detail string
	// EscalationAdvertised is the job's [Spec.EscalationAdvertised]: the hint
	// follows a denial marker in the notes and the detail.
	EscalationAdvertised bool
}

// Text renders the job_output result.
func (rd Read) Text() string {
	return render.JobOutput(render.JobRead(rd.Delta, rd.EscalationAdvertised), rd.Status, rd.Detail)
}

// Read returns the output produced since the previous read. Sandbox notes of a
// settled job are in the detail when the process exited and in the delta when
// it was killed or never ran.
func (j *Job) Read() Read {
	o := j.owner()
	j.readMu.Lock()
	defer j.readMu.Unlock()
	var out, errText string
	var lostOut, lostErr bool
	var paths []string
	if o != nil {
		out, j.cursorOut, lostOut = o.Since(Stdout, j.cursorOut)
		errText, j.cursorErr, lostErr = o.Since(Stderr, j.cursorErr)
		so, se := o.Streams()
		paths = []string{so.FullPath, se.FullPath}
	} else {
		out, j.cursorOut, lostOut = j.stdout.Since(j.cursorOut)
		errText, j.cursorErr, lostErr = j.stderr.Since(j.cursorErr)
		paths = []string{j.stdout.Path(), j.stderr.Path()}
	}
	s, done := j.Settled()
	d := render.Delta{Stdout: out, Stderr: errText, Lossy: lostOut || lostErr}
	if d.Lossy {
		for _, p := range paths {
			if p != "" {
				d.FullOutputPaths = append(d.FullOutputPaths, p)
			}
		}
	}
	if done && s.Outcome.Killed {
		d.Sandbox = s.Sandbox
	}
	status, detail := j.statusDetail()
	return Read{Delta: d, Status: status, Detail: detail, EscalationAdvertised: j.hint}
}

// Get returns owner's job id; other owners' jobs are invisible.
func (r *Registry) Get(owner, id string) (*Job, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, ok := r.jobs[owner][id]
	return j, ok
}

// List returns owner's jobs ordered by start.
func (r *Registry) List(owner string) []*Job {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*Job, 0, len(r.jobs[owner]))
	for _, j := range r.jobs[owner] {
		out = append(out, j)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Started.Before(out[b].Started) })
	return out
}

// Close kills every running job and waits for them to settle (at most
// grace); later Starts fail.
func (r *Registry) Close(grace time.Duration) error {
	r.mu.Lock()
	r.closed = true
	var all []*Job
	for _, m := range r.jobs {
		for _, j := range m {
			all = append(all, j)
		}
	}
	r.mu.Unlock()
	deadline := time.After(grace)
	for _, j := range all {
		j.Stop("the job registry was closed")
	}
	for _, j := range all {
		select {
		case <-j.done:
		case <-deadline:
			return fmt.Errorf("jobs: %s of %s did not settle within %v", j.ID, j.Owner, grace)
		}
	}
	return nil
}
