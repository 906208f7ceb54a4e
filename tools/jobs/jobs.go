package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dshsim/dshsim/llm"
	"github.com/dshsim/dshsim/render"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/outfile"
)

// Settled is how a process ended.
type Settled struct {
	// Outcome is the exit code, or the signal, or "killed before exit".
	Outcome render.Outcome
	// Sandbox holds the facts of a confined run; nil when unconfined.
	Sandbox *sandbox.Report
	// Bound names the resource limit that stopped the command, confined
	// or not ("" when none did; sandbox.Limits.Bound).
	Bound string
	// Err is set when the command never ran (a runner or start failure).
	Err error
	// Result is a producer job's outcome (producer.go); nil for a process.
	Result *Outcome
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

// Leader is implemented by a Process that is a real process leading its own
// session and process group (one started by sandbox/spawn): tooling that
// watches a job's processes (the replay's constructed model waits for them
// to settle) finds them by it.
type Leader interface {
	// Pid is the leader's process id, also its session and process group id.
	Pid() int
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

// DefaultMaxConcurrentJobsPerOwner is upstream's admission bound.
const DefaultMaxConcurrentJobsPerOwner = 10

// Job statuses as the model sees them.
const (
	StatusRunning   = render.StatusRunning
	StatusStopping  = "stopping"
	StatusCompleted = render.StatusCompleted
	StatusKilled    = render.StatusKilled
)

// Notice is the completion message of a background job.
type Notice struct {
	// Owner is the job's owner (session id).
	Owner string
	// JobID is e.g. "bash-1".
	JobID string
	// Kind is e.g. "bash"; Label is the command.
	Kind, Label string
	// Status and Detail are the rendered status and detail.
	Status, Detail string
	// Text is the VERBATIM notice the owner's model reads.
	Text string
	// Summary is the notice's one-line summary (VERBATIM, at most 120
	// UTF-16 code units).
	Summary string
	// SpawnFailed reports that the process never started (its runner could
	// not be spawned): upstream learns of that asynchronously, after the
	// step that started the job ended.
	SpawnFailed bool
}

// Options configure a registry.
type Options struct {
	// Notify receives one notice per background job that settles unreported
	// and owned. It is called from the job's own goroutine; nil drops notices.
	Notify func(Notice)
	// MaxOutputBytes is the per-stream in-memory tail (default 64000).
	MaxOutputBytes int
	// SpillCapBytes bounds a stream's full-output file (default 64 MiB).
	SpillCapBytes int64
	// OutputDir is where full-output files go; "" means a private
	// mkdtemp(<tmpdir>/dsh-subprocess-) created on first use.
	OutputDir string
	// MaxConcurrentJobsPerOwner bounds the live (running or stopping) jobs
	// per owner; 0 means [DefaultMaxConcurrentJobsPerOwner].
	MaxConcurrentJobsPerOwner int
	// EscalationAdvertised is the default of [Spec.EscalationAdvertised].
	EscalationAdvertised bool
	// Gate, when set, makes the registered jobs' output and settlement
	// observed only at the host's yields ([Gate]); nil observes at once.
	Gate *Gate
}

// Spec describes a job to launch.
type Spec struct {
	// Owner is the owning session id ("" = unowned); Kind the job kind
	// ("bash"); Label the command.
	Owner, Kind, Label string
	// EscalationAdvertised adds the escalation hint after a denial marker in
	// this job's reads, detail and notice.
	EscalationAdvertised bool
}

// LimitError refuses a start beyond the owner's admission bound (VERBATIM
// message, no code).
type LimitError struct{ Limit int }

func (e *LimitError) Error() string {
	return "background job limit reached for this owner (limit: " + strconv.Itoa(e.Limit) + "); use job_kill to stop an unneeded job, wait for it to finish, then retry"
}

// Registry errors (VERBATIM messages, no code).
var (
	// ErrClosed refuses starts after Close.
	ErrClosed = errors.New("jobs: registry closed")
	// ErrWaitAborted ends a wait whose call was aborted.
	ErrWaitAborted = errors.New("wait aborted")
)

// UnknownJobError is "unknown job <id>".
type UnknownJobError struct{ ID string }

func (e *UnknownJobError) Error() string { return "unknown job " + e.ID }

// ForeignJobError is "job <id> belongs to another session".
type ForeignJobError struct{ ID string }

func (e *ForeignJobError) Error() string { return "job " + e.ID + " belongs to another session" }

// Registry tracks background jobs: ids "<kind>-<n>" counted per kind for the
// whole registry (never reused), allocated only once a start returned. It
// also runs unregistered processes (foreground commands) that get an id only
// if adopted. It is safe for concurrent use.
type Registry struct {
	opts Options

	mu      sync.Mutex
	jobs    []*Job // registered, in registration order
	byID    map[string]*Job
	counts  map[string]int // kind -> last n
	runs    map[*Job]bool  // unregistered runs, for Close
	closed  bool
	fileSeq int
	dirMu   sync.Mutex
	dir     string
}

// NewRegistry returns an empty registry.
func NewRegistry(opts Options) *Registry {
	if opts.MaxOutputBytes <= 0 {
		opts.MaxOutputBytes = 64000
	}
	if opts.SpillCapBytes <= 0 {
		opts.SpillCapBytes = 64 << 20
	}
	if opts.MaxConcurrentJobsPerOwner <= 0 {
		opts.MaxConcurrentJobsPerOwner = DefaultMaxConcurrentJobsPerOwner
	}
	return &Registry{opts: opts, byID: map[string]*Job{}, counts: map[string]int{}, runs: map[*Job]bool{}, dir: opts.OutputDir}
}

func (r *Registry) outputDir() (string, error) {
	r.dirMu.Lock()
	defer r.dirMu.Unlock()
	if r.dir == "" {
		d, err := outfile.PrivateDir()
		if err != nil {
			return "", err
		}
		r.dir = d
	}
	return r.dir, nil
}

// Job is one process: a registered background job, or an unregistered run.
type Job struct {
	// Owner is the owning session id; Kind the job kind; Label the command.
	Owner, Kind, Label string
	// Started is when the process was started.
	Started time.Time

	r              *Registry
	hint           bool
	stdout, stderr *Capture
	proc           Process
	done           chan struct{}

	mu       sync.Mutex
	jobState // under mu

	readMu sync.Mutex // serialises reads (the cursors)
	readCursors
}

// jobState is a job's registration and settlement, under Job.mu.
type jobState struct {
	id            string
	registered    bool
	settled       Settled
	finished      time.Time // when the process settled
	isDone        bool
	reported      bool
	waiters       int
	killRequested bool
	stopReason    string
}

// readCursors are where a job's reads stand, under Job.readMu.
type readCursors struct {
	cursorOut int64
	cursorErr int64
	// under a Gate: output observed at yields and not read yet
	seenOut, seenErr string
	seenLost         bool
}

// ID returns the job id ("" for an unregistered run).
func (j *Job) ID() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.id
}

// liveLocked counts owner's registered jobs that have not settled (r.mu held).
func (r *Registry) liveLocked(owner string) int {
	n := 0
	for _, j := range r.jobs {
		if j.Owner != owner {
			continue
		}
		select {
		case <-j.done:
		default:
			n++
		}
	}
	return n
}

// admitLocked checks the admission bound (r.mu held).
func (r *Registry) admitLocked(owner string) error {
	if r.closed {
		return ErrClosed
	}
	if r.liveLocked(owner) >= r.opts.MaxConcurrentJobsPerOwner {
		return &LimitError{Limit: r.opts.MaxConcurrentJobsPerOwner}
	}
	return nil
}

// registerLocked issues the next id of j's kind and registers j (r.mu held).
func (r *Registry) registerLocked(j *Job) {
	r.counts[j.Kind]++
	id := j.Kind + "-" + strconv.Itoa(r.counts[j.Kind])
	j.mu.Lock()
	j.id, j.registered = id, true
	j.mu.Unlock()
	r.jobs = append(r.jobs, j)
	r.byID[id] = j
	if r.opts.Gate != nil {
		r.opts.Gate.watch(j.observe, j.done)
	}
}

// newJob prepares a job's captures (named by a private sequence number: the
// id does not exist yet).
func (r *Registry) newJob(spec Spec) *Job {
	r.mu.Lock()
	r.fileSeq++
	seq := strconv.Itoa(r.fileSeq)
	r.mu.Unlock()
	j := &Job{Owner: spec.Owner, Kind: spec.Kind, Label: spec.Label, r: r, hint: spec.EscalationAdvertised, done: make(chan struct{})}
	j.stdout = NewCapture(r.opts.MaxOutputBytes, r.opts.SpillCapBytes, r.outputDir, spec.Kind+"-run"+seq+"-stdout")
	j.stderr = NewCapture(r.opts.MaxOutputBytes, r.opts.SpillCapBytes, r.outputDir, spec.Kind+"-run"+seq+"-stderr")
	return j
}

// Start starts a background job for spec: the admission bound is checked
// first (a refused command never runs), then spawn starts the process, and
// only a start that returned takes an id. The job keeps running whatever
// happens to the call that started it, and notifies when it settles.
func (r *Registry) Start(spec Spec, spawn Spawner) (*Job, error) {
	r.mu.Lock()
	err := r.admitLocked(spec.Owner)
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return r.spawnJob(spec, spawn, r.registerLocked)
}

// Run starts an unregistered process for spec (a foreground command): no id,
// no admission, no notice, not listed; [Registry.Close] still stops it.
func (r *Registry) Run(spec Spec, spawn Spawner) (*Job, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, ErrClosed
	}
	r.mu.Unlock()
	return r.spawnJob(spec, spawn, func(j *Job) { r.runs[j] = true })
}

// spawnJob spawns spec's process and, unless the registry closed meanwhile
// (then the process is killed), records it with track (r.mu held) and lets
// it run.
func (r *Registry) spawnJob(spec Spec, spawn Spawner, track func(*Job)) (*Job, error) {
	j := r.newJob(spec)
	proc, err := spawn(j.stdout, j.stderr)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		proc.Kill()
		return nil, ErrClosed
	}
	track(j)
	r.mu.Unlock()
	j.begin(proc)
	return j, nil
}

// Adopt turns an unregistered run (of any registry) into a background job of
// r: admission is checked, the job takes r's next id, and it notifies when it
// settles (at once if it already has). The process keeps running.
func (r *Registry) Adopt(j *Job) error {
	j.mu.Lock()
	registered := j.registered
	j.mu.Unlock()
	if registered {
		return errors.New("jobs: the job is registered already")
	}
	r.mu.Lock()
	if err := r.admitLocked(j.Owner); err != nil {
		r.mu.Unlock()
		return err
	}
	r.registerLocked(j)
	r.mu.Unlock()
	j.r.mu.Lock()
	delete(j.r.runs, j)
	j.r.mu.Unlock()
	j.mu.Lock()
	j.r = r
	send := j.isDone && !j.reported && j.Owner != ""
	if send {
		j.reported = true
	}
	j.mu.Unlock()
	if send {
		j.notify()
	}
	return nil
}

func (j *Job) begin(proc Process) {
	j.mu.Lock()
	j.proc = proc
	j.Started = time.Now()
	killed := j.killRequested
	j.mu.Unlock()
	if killed { // a stop reached the job while it was being spawned
		proc.Kill()
	}
	if settledAtStart(proc) {
		j.run() // a process that never started (a producer that already settled) settles and notifies before its start returns
		return
	}
	go j.run()
}

func (j *Job) run() {
	j.mu.Lock()
	p := j.proc
	j.mu.Unlock()
	s := p.Wait()
	j.stdout.Close()
	j.stderr.Close()
	// the host learns of an exit at its next yield
	if j.gated() {
		j.r.opts.Gate.enqueue(func() { j.observe(); j.settle(s) })
		return
	}
	j.settle(s)
}

// settle records the process's end, reports the job to a pending wait, and
// sends its notice unless it was reported.
func (j *Job) settle(s Settled) {
	j.mu.Lock()
	if j.registered && j.killRequested && !s.Outcome.Killed && s.Result == nil {
		// asked to stop, it exited on its own terms (a trapped SIGTERM):
		// upstream reports it killed before exit
		s.Outcome = render.Outcome{Killed: true}
	}
	j.settled, j.isDone, j.finished = s, true, time.Now()
	if j.waiters > 0 { // a wait pending at settlement reports the job
		j.reported = true
	}
	send := j.registered && !j.reported && j.Owner != ""
	if send {
		j.reported = true
	}
	close(j.done)
	j.mu.Unlock()
	if send {
		j.notify()
	}
}

func (j *Job) notify() {
	j.mu.Lock()
	r := j.r
	j.mu.Unlock()
	if r.opts.Notify == nil {
		return
	}
	defer func() {
		if v := recover(); v != nil { // a broken receiver must not take the process down
			log.Printf("jobs: the completion notice of %s (owner %s) was lost: Notify panicked: %v", j.ID(), j.Owner, v)
		}
	}()
	status, detail := j.StatusDetail()
	s, _ := j.Settled()
	line := render.StatusLine(status, detail)
	r.opts.Notify(Notice{
		Owner: j.Owner, JobID: j.ID(), Kind: j.Kind, Label: j.Label, Status: status, Detail: detail,
		Text:        render.CompletionNotice(j.ID(), j.Kind, j.Label, status, detail),
		Summary:     NoticeSummary(j.Kind + " " + j.Label + " " + line),
		SpawnFailed: s.Err != nil && s.Sandbox != nil && s.Sandbox.RunnerFailed,
	})
}

// NoticeSummary cuts s to 120 UTF-16 code units: the first 119 and "…" when
// it is longer (a surrogate pair is never split): [llm.BoundSummary].
func NoticeSummary(s string) string { return llm.BoundSummary(s) }

// WaitFor waits until the job settled (true), timeout expired (false) or ctx
// was cancelled (false, ctx.Err()). It never kills the job. A wait pending
// when the job settles reports it (no notice follows).
func (j *Job) WaitFor(ctx context.Context, timeout time.Duration) (bool, error) {
	j.mu.Lock()
	j.waiters++
	j.mu.Unlock()
	defer func() {
		j.mu.Lock()
		j.waiters--
		j.mu.Unlock()
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	return j.await(ctx, t.C)
}

// await blocks until the job settled (true), stop fired (false) or ctx ended
// (false, ctx.Err()). Under a gate the wait is a yield of the host: it
// observes whatever arrives while it blocks.
func (j *Job) await(ctx context.Context, stop <-chan time.Time) (bool, error) {
	j.mu.Lock()
	g := j.r.opts.Gate
	j.mu.Unlock()
	for {
		var arrived <-chan struct{}
		if g != nil {
			arrived = g.signal()
			g.Pump()
		}
		select {
		case <-j.done:
			return true, nil
		case <-arrived:
		case <-stop:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// Done is closed when the job settled.
func (j *Job) Done() <-chan struct{} { return j.done }

// Forget drops a settled unregistered run from its registry (no notice).
func (j *Job) Forget() {
	j.mu.Lock()
	r := j.r
	j.mu.Unlock()
	r.mu.Lock()
	delete(r.runs, j)
	r.mu.Unlock()
}

// Kill asks the job's process group to terminate for the caller's own reason
// (a timeout or an abort of the call that started it). It returns at once.
func (j *Job) Kill() { j.Stop("") }

// Stop asks the job's process group to terminate because of something
// outside the call that started it and records why (the first non-empty
// reason is kept); the job is then stopping and reported (no notice). It
// returns at once.
func (j *Job) Stop(reason string) {
	j.mu.Lock()
	j.killRequested = true
	if reason != "" {
		j.reported = true
		if j.stopReason == "" {
			j.stopReason = reason
		}
	}
	p := j.proc
	j.mu.Unlock()
	if p != nil {
		p.Kill()
	}
}

// Cancel is job_kill: a live job is stopped (true); a settled one is only
// marked reported (false: it had already finished).
func (j *Job) Cancel(reason string) bool {
	j.mu.Lock()
	if j.isDone {
		j.reported = true
		j.mu.Unlock()
		return false
	}
	j.mu.Unlock()
	if reason == "" {
		reason = "job_kill"
	}
	j.Stop(reason)
	return true
}

// StopReason returns the reason given to Stop, "" when the job was not
// stopped from outside.
func (j *Job) StopReason() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.stopReason
}

// KillRequested reports whether Kill, Stop or Cancel reached the job.
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

// StatusDetail returns the job's status (running, stopping, completed,
// killed) and its terminal detail ("" while it runs).
func (j *Job) StatusDetail() (string, string) {
	j.mu.Lock()
	s, done, stopping := j.settled, j.isDone, j.killRequested && j.stopReason != ""
	j.mu.Unlock()
	switch {
	case !done && stopping:
		return StatusStopping, ""
	case !done:
		return StatusRunning, ""
	case s.Result != nil:
		return s.Result.Status, s.Result.Detail
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

// Text renders the job_output result: [Read.Body] and the status line.
func (rd Read) Text() string {
	return render.JobOutput(rd.Body(), rd.Status, rd.Detail)
}

// Body renders the read's new output and notes (the value's text).
func (rd Read) Body() string { return render.JobRead(rd.Delta, rd.EscalationAdvertised) }

// Read returns the output produced since the previous read (consumed). The
// sandbox notes of a settled job that was killed or never ran follow on
// every read; those of an exited process are in its detail. A read of a
// settled job reports it (no notice follows).
func (j *Job) Read() Read {
	j.readMu.Lock()
	defer j.readMu.Unlock()
	var out, errText string
	var lost bool
	if j.gated() {
		out, errText, lost = j.seenOut, j.seenErr, j.seenLost
		j.seenOut, j.seenErr, j.seenLost = "", "", false
	} else {
		out, errText, lost = j.pullLocked()
	}
	s, done := j.Settled()
	d := render.Delta{Stdout: out, Stderr: errText, Lossy: lost}
	if d.Lossy {
		var paths []string
		if o := j.owner(); o != nil {
			so, se := o.Streams()
			paths = []string{so.FullPath, se.FullPath}
		} else {
			paths = []string{j.stdout.Path(), j.stderr.Path()}
		}
		for _, p := range paths {
			if p != "" {
				d.FullOutputPaths = append(d.FullOutputPaths, p)
			}
		}
	}
	if done {
		if s.Result != nil {
			d.Stdout = s.Result.Output // a producer's result, on every read
		}
		if s.Outcome.Killed {
			d.Sandbox = s.Sandbox
		}
		j.mu.Lock()
		j.reported = true
		j.mu.Unlock()
	}
	status, detail := j.StatusDetail()
	return Read{Delta: d, Status: status, Detail: detail, EscalationAdvertised: j.hint}
}

// gated reports whether the job is observed through a gate.
func (j *Job) gated() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	// of a process that never started it learns at once: Node reports a
	// failed spawn on the next tick, not at a yield
	return j.registered && j.r.opts.Gate != nil && !settledAtStart(j.proc)
}

// settledAtStart reports whether proc settled before its start returned: a
// process that never started, or a producer that had already finished.
func settledAtStart(proc Process) bool {
	switch proc.(type) {
	case failedProc, settledProc:
		return true
	}
	return false
}

// pullLocked takes the output since the cursors from the process (readMu
// held) and whether some of it is no longer in memory.
func (j *Job) pullLocked() (out, errText string, lost bool) {
	var lostOut, lostErr bool
	if o := j.owner(); o != nil {
		out, j.cursorOut, lostOut = o.Since(Stdout, j.cursorOut)
		errText, j.cursorErr, lostErr = o.Since(Stderr, j.cursorErr)
	} else {
		out, j.cursorOut, lostOut = j.stdout.Since(j.cursorOut)
		errText, j.cursorErr, lostErr = j.stderr.Since(j.cursorErr)
	}
	return out, errText, lostOut || lostErr
}

// observe is one yield for this job: the output since the last one becomes
// readable.
func (j *Job) observe() {
	j.readMu.Lock()
	defer j.readMu.Unlock()
	out, errText, lost := j.pullLocked()
	max := j.r.opts.MaxOutputBytes
	var cutOut, cutErr bool
	j.seenOut, cutOut = keepTail(j.seenOut+out, max)
	j.seenErr, cutErr = keepTail(j.seenErr+errText, max)
	j.seenLost = j.seenLost || lost || cutOut || cutErr
}

// keepTail returns the last max bytes of s (from a rune start) and whether
// it cut.
func keepTail(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	i := len(s) - max
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:], true
}

// Get returns the registered job id for owner: unknown ids and jobs of
// another owner are errors (an unowned job is everybody's).
func (r *Registry) Get(owner, id string) (*Job, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, ok := r.byID[id]
	switch {
	case !ok:
		return nil, &UnknownJobError{ID: id}
	case j.Owner != owner && j.Owner != "":
		return nil, &ForeignJobError{ID: id}
	}
	return j, nil
}

// List returns owner's and the unowned registered jobs, running and
// finished, in registration order.
func (r *Registry) List(owner string) []*Job {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*Job
	for _, j := range r.jobs {
		if j.Owner == owner || j.Owner == "" {
			out = append(out, j)
		}
	}
	return out
}

// RunningPIDs returns the leader pids ([Leader]) of the registered jobs that
// have not settled (running or stopping), in registration order; a job whose
// Process is not a Leader is left out.
func (r *Registry) RunningPIDs() []int {
	r.mu.Lock()
	all := append([]*Job(nil), r.jobs...)
	r.mu.Unlock()
	var pids []int
	for _, j := range all {
		select {
		case <-j.done:
			continue
		default:
		}
		j.mu.Lock()
		l, ok := j.proc.(Leader)
		j.mu.Unlock()
		if ok {
			pids = append(pids, l.Pid())
		}
	}
	return pids
}

// Close stops every job and run (reported: no notice) and waits for them to
// settle (at most grace); later starts fail.
func (r *Registry) Close(grace time.Duration) error {
	r.mu.Lock()
	r.closed = true
	all := append([]*Job(nil), r.jobs...)
	for j := range r.runs {
		all = append(all, j)
	}
	r.mu.Unlock()
	deadline := time.After(grace)
	for _, j := range all {
		j.Stop("the job registry was closed")
	}
	for _, j := range all {
		if ok, _ := j.await(context.Background(), deadline); !ok {
			return fmt.Errorf("jobs: %s of %s did not settle within %v", j.Label, j.Owner, grace)
		}
	}
	return nil
}
