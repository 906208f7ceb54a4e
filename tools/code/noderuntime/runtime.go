package noderuntime

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/spawn"
	"github.com/dshsim/dshsim/tools/code/compile"
)

//go:embed runtime.js
var script string

// Failure kinds (upstream's; protocol is the child-process channel's).
const (
	KindException     = "exception"
	KindTimeout       = "timeout"
	KindAbort         = "abort"
	KindWorkerExit    = "worker-exit"
	KindInvalidOutput = "invalid-output"
	KindOutputLimit   = "output-limit"
	KindProtocol      = "protocol"
	// KindParse is a workflow body that does not parse (nothing ran).
	KindParse = "parse"
)

// Defaults of [Config] (upstream's worker-thread runtime, and the channel
// limits of its child-process runtime).
const (
	DefaultComputeMs              = 60000
	DefaultMaxWallMs              = 600000
	DefaultMaxOutputBytes         = 64 << 20
	DefaultMaxOldGenerationSizeMb = 512
	DefaultMaxMessageBytes        = 128 << 20
	DefaultMaxPendingCalls        = 128
	DefaultGrace                  = 3 * time.Second
)

// pollInterval is how often busy time and native output are measured.
const pollInterval = 25 * time.Millisecond

// Config configures the runtime. Zero fields take the defaults.
type Config struct {
	// Node is the node executable (default: "node" on PATH, resolved by New).
	Node string
	// ComputeMs is the busy-time budget: CPU time of the program's event-loop
	// thread after start-up.
	ComputeMs float64
	// MaxWallMs is the elapsed ceiling (tool and approval waits count).
	MaxWallMs float64
	// MaxOutputBytes caps the combined output ledger (logs plus the value or
	// the failure message, as JSON).
	MaxOutputBytes float64
	// MaxOldGenerationSizeMb is the child's V8 heap cap.
	MaxOldGenerationSizeMb float64
	// MaxMessageBytes caps one channel frame.
	MaxMessageBytes float64
	// MaxPendingCalls caps the calls awaiting a reply.
	MaxPendingCalls float64
	// Grace bounds the wait for the child's exit and output after it was killed.
	Grace time.Duration
}

// Runtime runs programs, each in a fresh Node child process.
type Runtime struct {
	node                           string
	computeMs, maxWallMs           float64
	maxOutput                      int64
	heapMb, maxMessage, maxPending int
	grace                          time.Duration
}

const configPrefix = "dsh-code-runtime-worker-thread: config."

// New validates cfg (upstream's VERBATIM load errors) and resolves node.
func New(cfg Config) (*Runtime, error) {
	r := &Runtime{grace: cfg.Grace}
	if r.grace <= 0 {
		r.grace = DefaultGrace
	}
	num := func(key string, v, def float64) (float64, error) {
		if v == 0 {
			return def, nil
		}
		if !(v > 0) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("%s%s must be a positive number, got %s", configPrefix, key, jsjson.FormatNumber(v))
		}
		return v, nil
	}
	var errs []error
	var err error
	if r.computeMs, err = num("computeMs", cfg.ComputeMs, DefaultComputeMs); err != nil {
		errs = append(errs, err)
	}
	if r.maxWallMs, err = num("maxWallMs", cfg.MaxWallMs, DefaultMaxWallMs); err != nil {
		errs = append(errs, err)
	} else if r.maxWallMs > math.MaxInt32 {
		errs = append(errs, fmt.Errorf("%smaxWallMs must be at most 2147483647 (Node clamps a longer setTimeout delay to 1ms), got %s", configPrefix, jsjson.FormatNumber(r.maxWallMs)))
	}
	out := cfg.MaxOutputBytes
	if out == 0 {
		out = DefaultMaxOutputBytes
	}
	if !(out >= 4) || out != math.Trunc(out) || out > 1<<53-1 {
		errs = append(errs, fmt.Errorf("%smaxOutputBytes must be a safe integer of at least 4, got %s", configPrefix, jsjson.FormatNumber(out)))
	}
	r.maxOutput = int64(out)
	ints := []struct {
		key string
		v   float64
		def float64
		dst *int
	}{
		{"maxOldGenerationSizeMb", cfg.MaxOldGenerationSizeMb, DefaultMaxOldGenerationSizeMb, &r.heapMb},
		{"maxMessageBytes", cfg.MaxMessageBytes, DefaultMaxMessageBytes, &r.maxMessage},
		{"maxPendingCalls", cfg.MaxPendingCalls, DefaultMaxPendingCalls, &r.maxPending},
	}
	for _, f := range ints {
		v, err := num(f.key, f.v, f.def)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		*f.dst = int(math.Min(math.Ceil(v), math.MaxUint32))
	}
	node := cfg.Node
	if node == "" {
		node = "node"
	}
	if r.node, err = exec.LookPath(node); err != nil {
		errs = append(errs, fmt.Errorf("dsh-code-runtime: the node executable %q is not usable: %v", node, err))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return r, nil
}

// Node returns the resolved node executable.
func (r *Runtime) Node() string { return r.node }

// Call dispatches one tools.<name>(args) of the program; seq is the call's
// number in program order (1, 2, ..., counted at submission). Calls run
// concurrently, so they may arrive out of that order. A returned error's
// message is what the program's ToolCallError carries. It may run after Run
// returned; its result is then dropped.
type Call func(ctx context.Context, seq int64, name string, args json.RawMessage) (json.RawMessage, error)

// Request is one program run.
type Request struct {
	// Code is the program: the body of an async TypeScript function.
	Code string
	// Names are the tools the program may call as tools.<name>.
	Names []string
	// Call dispatches a call; it receives Run's context. Each call runs on
	// a goroutine of its own.
	Call Call
	// Submitted, when set, is told of each call the moment the host reads
	// it, in program order and before Call runs for it.
	Submitted func(Submission)
	// TurnEnded, when set, is told that the program ended a turn (its
	// synchronous run and the microtasks after it) whose last call was id:
	// every call the turn issued has been submitted.
	TurnEnded func(id int64)
	// Policy is the run's sandbox policy; danger-full-access runs node
	// unconfined, as bash does; a confined mode needs Confiner.
	Policy sandbox.Policy
	// Confiner wraps node's argv for a confined mode (the provider bash uses).
	Confiner spawn.Confiner
	// Dir is the child's working directory; "" is Policy.WorkspaceRoot.
	Dir string
	// Env is the environment the child's few variables come from (PATH, TEMP,
	// TMP); nil is the process environment.
	Env []string
	// Workflow, when set, runs Code as a workflow tool's script body (plain
	// JavaScript, not compiled): in a fresh vm context holding only the
	// workflow hooks; its agent() calls reach Call as "agent", and Call
	// gets "start" once the body parsed, before anything else.
	Workflow *Workflow
}

// Submission is a call as the host reads it.
type Submission struct {
	ID   int64
	Name string
	// Args are the call's arguments, as Call receives them.
	Args json.RawMessage
	// CPU is the program's CPU time (its process's, user and system) when
	// it issued the call, as the child measured it: how far the program had
	// got, whatever the scheduling. Only the difference between two calls
	// of one run means anything.
	CPU time.Duration
}

// Workflow is a workflow run's setup: its name (the script's file name in
// stacks), its args global (nil: undefined) and its limits.
type Workflow struct {
	Name   string
	Args   json.RawMessage
	Limits WorkflowLimits
}

// WorkflowLimits are upstream's engine limits.
type WorkflowLimits struct {
	MaxConcurrentAgents int `json:"maxConcurrentAgents"`
	MaxTotalAgents      int `json:"maxTotalAgents"`
	MaxItemsPerCall     int `json:"maxItemsPerCall"`
	SyncTimeoutMs       int `json:"syncTimeoutMs"`
}

// WorkflowCalls are the calls a workflow body makes of the host.
var WorkflowCalls = []string{"start", "agent"}

// Failure is a run that did not complete.
type Failure struct {
	// Kind is one of the Kind constants.
	Kind string
	// Message is the failure's text.
	Message string
}

// Result is a settled run.
type Result struct {
	// Value is the program's completion as canonical JSON, nil when the
	// program returned nothing or failed.
	Value json.RawMessage
	// Logs are the output entries in order: console and process.stdout/stderr
	// writes, then what reached the child's own stdout and stderr (one entry
	// per stream). Never nil.
	Logs []string
	// Error is set when the run failed.
	Error *Failure
	// Backend is the sandbox backend that confined the child ("" unconfined
	// or not started).
	Backend string
	// Sandbox is the report of the confined child (mode, backend,
	// enforcement, what it cannot govern, denial); nil unconfined or not
	// started.
	Sandbox *sandbox.Report
}

// JSReason is implemented by a cancellation cause that stands for a
// JavaScript abort reason: JSString is what String(reason) gives for it. A
// user's cancellation is one: upstream aborts the turn with the plain object
// {kind: "user"}, which String renders as "[object Object]".
type JSReason interface {
	JSString() string
}

// AbortReason is String(signal.reason) for a cancelled context: upstream's
// default AbortSignal reasons for plain cancellation and deadlines, a
// [JSReason]'s JSString, else the cause's text.
func AbortReason(ctx context.Context) string {
	cause := context.Cause(ctx)
	var jr JSReason
	switch {
	case errors.As(cause, &jr):
		return jr.JSString()
	case cause == nil || cause == context.Canceled:
		return "AbortError: This operation was aborted"
	case cause == context.DeadlineExceeded:
		return "TimeoutError: The operation was aborted due to timeout"
	}
	return cause.Error()
}

// childEnv keeps only the variables node and its children need to start.
func childEnv(base []string) []string {
	if base == nil {
		base = os.Environ()
	}
	var out []string
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "PATH", "TEMP", "TMP":
			out = append(out, kv)
		}
	}
	return out
}

// ReportsTurns reports that Run tells [Request.Submitted] and
// [Request.TurnEnded] of every call and every turn of the program.
func (r *Runtime) ReportsTurns() bool { return true }

// Run compiles and runs one program. Every program outcome is a Result;
// the error is for a run that could not start: a confinement refusal
// (*sandbox.UnavailableError when no backend can confine, or the runner
// failed before node started; nothing ran unconfined) or a spawn failure.
func (r *Runtime) Run(ctx context.Context, req Request) (Result, error) {
	if ctx.Err() != nil {
		return Result{Logs: []string{}, Error: &Failure{KindAbort, AbortReason(ctx)}}, nil
	}
	body := req.Code
	if req.Workflow != nil {
		req.Names = WorkflowCalls
	} else {
		var err error
		if body, err = compile.Compile(req.Code); err != nil {
			return r.finish(newLedger(r.maxOutput), nil, &Failure{KindException, err.Error()}, ""), nil
		}
	}
	switch {
	case req.Policy.Mode == sandbox.DangerFullAccess:
	case req.Policy.Mode.Confined():
		if req.Confiner == nil {
			return Result{}, &sandbox.UnavailableError{Mode: req.Policy.Mode}
		}
	default:
		return Result{}, fmt.Errorf("dsh-code-runtime: unknown sandbox mode %q", string(req.Policy.Mode))
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return Result{}, fmt.Errorf("dsh-code-runtime: channel: %w", err)
	}
	hostEnd, childEnd := os.NewFile(uintptr(fds[0]), "run_code-channel"), os.NewFile(uintptr(fds[1]), "run_code-channel-child")
	conn, err := net.FileConn(hostEnd)
	hostEnd.Close()
	if err != nil {
		childEnd.Close()
		return Result{}, fmt.Errorf("dsh-code-runtime: channel: %w", err)
	}
	defer conn.Close()
	outDir, err := os.MkdirTemp("", "dsh-run-code-")
	if err != nil {
		childEnd.Close()
		return Result{}, err
	}
	defer os.RemoveAll(outDir)

	// The output caps are set before the child starts: its copy goroutines
	// write from the first byte on.
	run := &runState{r: r, req: req, ledger: newLedger(r.maxOutput), body: body, conn: conn, calls: calls{nextID: 1, argBytes: map[int64]int64{}},
		stdout: native{max: r.maxOutput}, stderr: native{max: r.maxOutput}}
	dir := req.Dir
	if dir == "" {
		dir = req.Policy.WorkspaceRoot
	}
	pctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	// --8<-- [start:confine]
	// The same path as a bash command: danger-full-access runs node as is,
	// a confined mode is wrapped by the provider (no backend: the run is
	// refused); the channel is descriptor 3, never the child's stdout.
	proc, err := spawn.Start(pctx, spawn.Request{
		Argv:       []string{r.node, "--max-old-space-size=" + strconv.Itoa(r.heapMb), "-e", script, strconv.Itoa(r.maxMessage)},
		Policy:     req.Policy,
		Confiner:   req.Confiner,
		Dir:        dir,
		Env:        childEnv(req.Env),
		ExtraFiles: []*os.File{childEnd},
		Stdout:     &run.stdout,
		Stderr:     &run.stderr,
		Grace:      r.grace,
		OutputDir:  outDir,
	})
	childEnd.Close()
	if err != nil {
		return Result{}, err
	}
	// --8<-- [end:confine]
	run.proc = proc
	if testAfterStart != nil {
		testAfterStart()
	}
	return run.loop(ctx)
}

// testAfterStart, set by tests only, runs between the child's start and the
// host's loop: it stands for the loop being scheduled late.
var testAfterStart func()

// native is one of the child's own output streams, kept up to one byte over
// the ledger's cap (beyond it the run has overflowed anyway).
type native struct {
	mu  sync.Mutex
	buf []byte
	max int64
	n   int64
}

func (s *native) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n += int64(len(p))
	if room := s.max + 1 - int64(len(s.buf)); room > 0 {
		s.buf = append(s.buf, p[:min(int64(len(p)), room)]...)
	}
	return len(p), nil
}

func (s *native) snapshot() ([]byte, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.buf...), s.n
}

type reply struct {
	id    int64
	value json.RawMessage
	err   error
}

// runState is one run's host side.
type runState struct {
	r      *Runtime
	req    Request
	ledger *ledger
	body   string
	conn   net.Conn
	proc   *spawn.Process

	stdout, stderr native

	ready   bool
	pid     int
	baseCPU int64
	calls
	value *jsjson.Value
}

// calls counts the program's nested calls: the next id, those pending and
// their argument bytes, the last one a reported turn issued.
type calls struct {
	nextID    int64
	pending   int
	pendBytes int64
	argBytes  map[int64]int64
	turn      int64 // the last call a reported turn issued
}

type readResult struct {
	m   message
	err error
}

func (s *runState) loop(ctx context.Context) (Result, error) {
	msgs := make(chan readResult, 16)
	quit := make(chan struct{})
	defer close(quit)
	go func() {
		for {
			m, err := readMessage(s.conn, s.r.maxMessage)
			select {
			case msgs <- readResult{m, err}:
			case <-quit:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	out := newOutbox(s.conn, quit)
	replies := make(chan reply, s.r.maxPending+1)
	wall := time.NewTimer(time.Duration(s.r.maxWallMs * float64(time.Millisecond)))
	defer wall.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()

	var failure *Failure
	done, exited := false, false
	procDone := s.proc.Done()
	for !done && failure == nil {
		select {
		case rr := <-msgs:
			switch {
			case rr.err == nil:
				done, failure = s.handle(ctx, rr.m, out, replies)
			case errors.Is(rr.err, io.EOF) || exited:
				// the child closed its end (or exited and its last frames
				// are read): it ended before completing
				select {
				case <-s.proc.Done():
				case <-time.After(s.r.grace):
				}
				failure = s.exitFailure()
			default:
				failure = &Failure{KindProtocol, rr.err.Error()}
			}
		case <-procDone:
			exited, procDone = true, nil
			// frames still queued in the socket are read until end of file
			_ = s.conn.SetReadDeadline(time.Now().Add(s.r.grace))
		case rep := <-replies:
			s.pending--
			s.pendBytes -= s.argBytes[rep.id]
			delete(s.argBytes, rep.id)
			if f := s.replyFrame(rep); f != nil {
				out.send(f)
			}
		case <-wall.C:
			failure = &Failure{KindTimeout, "wall-clock ceiling reached (" + jsjson.FormatNumber(s.r.maxWallMs) + "ms)"}
		case <-tick.C:
			failure = s.poll()
		case <-ctx.Done():
			failure = &Failure{KindAbort, AbortReason(ctx)}
		}
	}
	return s.settle(failure)
}

// handle applies one message from the child. stop reports a completed run.
func (s *runState) handle(ctx context.Context, m message, out *outbox, replies chan<- reply) (stop bool, f *Failure) {
	if !s.ready && m.typ != "ready" {
		return false, protocolFailure("program frame arrived before bootstrap readiness")
	}
	switch m.typ {
	case "ready":
		return false, s.boot(m, out)
	case "call":
		return false, s.startCall(ctx, m, replies)
	case "turn":
		return false, s.turnEnded(m)
	case "log":
		t, ok := str(m.v, "text")
		if !ok {
			return false, protocolFailure("invalid control frame")
		}
		if !s.ledger.add(t.Units) {
			return false, &Failure{KindOutputLimit, ""}
		}
	case "output-limit":
		return false, &Failure{KindOutputLimit, ""}
	case "done":
		return s.completed(m)
	case "fatal":
		msg, ok := str(m.v, "message")
		if !ok {
			return false, protocolFailure("invalid control frame")
		}
		return false, &Failure{KindWorkerExit, "worker error: " + msg.Str()}
	default:
		return false, protocolFailure("unknown control message")
	}
	return false, nil
}

// protocolFailure is the child breaking the control protocol.
func protocolFailure(text string) *Failure { return &Failure{KindProtocol, text} }

// boot answers the child's readiness (once) with the program: it notes the
// program's pid and CPU time so far, and sends the boot frame.
func (s *runState) boot(m message, out *outbox) *Failure {
	if s.ready {
		return protocolFailure("invalid control frame")
	}
	s.ready = true
	s.pid = s.proc.Pid()
	if pid, ok := integer(m.v, "pid"); ok && isDescendant(int(pid), s.pid) {
		s.pid = int(pid)
	}
	s.baseCPU, _ = threadCPUMillis(s.pid)
	type workflowBoot struct {
		Mode   string          `json:"mode"`
		Name   string          `json:"name"`
		Args   json.RawMessage `json:"args,omitempty"`
		Limits WorkflowLimits  `json:"limits"`
	}
	var wf *workflowBoot
	if w := s.req.Workflow; w != nil {
		wf = &workflowBoot{"workflow", w.Name, w.Args, w.Limits}
	}
	boot, err := json.Marshal(struct {
		Type           string   `json:"type"`
		Code           string   `json:"code"`
		Names          []string `json:"names"`
		MaxOutputBytes int64    `json:"maxOutputBytes"`
		*workflowBoot
	}{"boot", s.body, append([]string{}, s.req.Names...), s.r.maxOutput, wf})
	if err != nil || len(boot) > s.r.maxMessage {
		return protocolFailure("the program does not fit in one control frame")
	}
	out.send(frame(boot))
	return nil
}

// startCall checks a binding call (the next identity, a declared tool,
// within the pending limits) and runs it; its reply arrives on replies.
func (s *runState) startCall(ctx context.Context, m message, replies chan<- reply) *Failure {
	id, ok := integer(m.v, "id")
	if !ok || id != s.nextID {
		return protocolFailure("invalid binding call identity")
	}
	g, gok := str(m.v, "global")
	n, nok := str(m.v, "name")
	cpu, cok := integer(m.v, "cpu")
	args := m.v.Get("args")
	if !gok || !nok || !cok || args == nil {
		return protocolFailure("invalid control frame")
	}
	name := n.Str()
	if g.Str() != "tools" || !s.declared(name) {
		return protocolFailure("program requested an undeclared binding")
	}
	raw := json.RawMessage(jsjson.Stringify(args))
	s.pendBytes += int64(len(raw))
	if s.pending+1 > s.r.maxPending || s.pendBytes > int64(s.r.maxMessage) {
		return protocolFailure("pending binding calls exceed configured limits")
	}
	s.nextID++
	s.pending++
	s.argBytes[id] = int64(len(raw))
	if s.req.Submitted != nil {
		s.req.Submitted(Submission{ID: id, Name: name, Args: raw, CPU: time.Duration(cpu) * time.Microsecond})
	}
	call := s.req.Call
	go func() {
		rep := reply{id: id}
		if call == nil {
			rep.err = fmt.Errorf("unknown binding %q", "tools."+name)
		} else {
			rep.value, rep.err = call(ctx, id, name, raw)
		}
		replies <- rep
	}()
	return nil
}

// turnEnded takes the child's report that a turn of the program ended whose
// last call was id (not before an earlier report, not past the last call).
func (s *runState) turnEnded(m message) *Failure {
	id, ok := integer(m.v, "id")
	if !ok || id < s.turn || id >= s.nextID {
		return protocolFailure("invalid control frame")
	}
	s.turn = id
	if s.req.TurnEnded != nil {
		s.req.TurnEnded(id)
	}
	return nil
}

// completed takes the program's completion: its value, or the error it failed
// with (an exception, invalid output, the output limit).
func (s *runState) completed(m message) (stop bool, f *Failure) {
	if e := m.v.Get("error"); e != nil {
		k, kok := str(e, "kind")
		msg, mok := str(e, "message")
		if !kok || !mok {
			return false, protocolFailure("invalid control frame")
		}
		switch kind := k.Str(); kind {
		case KindException, KindInvalidOutput, KindOutputLimit:
			return false, &Failure{kind, msg.Str()}
		case KindParse:
			if s.req.Workflow != nil {
				return false, &Failure{kind, msg.Str()}
			}
		}
		return false, protocolFailure("invalid control frame")
	}
	s.value = m.v.Get("value")
	return true, nil
}

func (s *runState) declared(name string) bool {
	for _, n := range s.req.Names {
		if n == name {
			return true
		}
	}
	return false
}

// replyFrame encodes a call's answer (nil once nothing should be sent).
func (s *runState) replyFrame(rep reply) []byte {
	type frameBody struct {
		Type    string          `json:"type"`
		ID      int64           `json:"id"`
		OK      bool            `json:"ok"`
		Value   json.RawMessage `json:"value,omitempty"`
		Message string          `json:"message,omitempty"`
	}
	b := frameBody{Type: "reply", ID: rep.id, OK: rep.err == nil}
	if rep.err != nil {
		b.Message = rep.err.Error()
	} else {
		b.Value = rep.value
		if len(b.Value) == 0 {
			b.Value = json.RawMessage("null")
		}
		if !json.Valid(b.Value) {
			b = frameBody{Type: "reply", ID: rep.id, Message: "binding resolution must be lossless JSON"}
		}
	}
	enc, err := json.Marshal(b)
	if err == nil && len(enc) > s.r.maxMessage {
		enc, err = json.Marshal(frameBody{Type: "reply", ID: rep.id, Message: fmt.Sprintf("binding resolution exceeds the %d-byte control frame limit", s.r.maxMessage)})
	}
	if err != nil {
		return nil
	}
	return frame(enc)
}

// poll measures busy time and the child's own output.
func (s *runState) poll() *Failure {
	if s.ready {
		if ms, err := threadCPUMillis(s.pid); err == nil && float64(ms-s.baseCPU) > s.r.computeMs {
			return &Failure{KindTimeout, "compute budget exhausted (" + jsjson.FormatNumber(s.r.computeMs) + "ms busy)"}
		}
	}
	_, o := s.stdout.snapshot()
	_, e := s.stderr.snapshot()
	// a lower bound of the two native entries' JSON size
	if s.ledger.used+o+e > s.r.maxOutput {
		return &Failure{KindOutputLimit, ""}
	}
	return nil
}

// exitFailure is the failure of a child that ended before it completed.
func (s *runState) exitFailure() *Failure {
	select {
	case <-s.proc.Done():
	default:
		return &Failure{KindWorkerExit, "worker closed its channel before completing"}
	}
	res, _ := s.proc.Wait()
	stderr, _ := s.stderr.snapshot()
	switch {
	case strings.Contains(string(stderr), "JavaScript heap out of memory"):
		return &Failure{KindWorkerExit, "worker error: Worker terminated due to reaching memory limit: JS heap out of memory"}
	case res.Signaled:
		return &Failure{KindWorkerExit, "worker exited with signal " + res.Signal + " before completing"}
	}
	return &Failure{KindWorkerExit, "worker exited with code " + strconv.Itoa(res.ExitCode) + " before completing"}
}

// settle ends the run: the child and every process below it are killed,
// its output drained (up to the grace), and the result composed. A runner
// that failed before node reported ready is a confinement failure.
func (s *runState) settle(failure *Failure) (Result, error) {
	select {
	case <-s.proc.Done():
	default:
		killTree(s.proc.Pid())
		s.proc.Kill()
	}
	select {
	case <-s.proc.Done():
	case <-time.After(2 * s.r.grace):
	}
	res, werr := s.proc.Wait()
	var ue *sandbox.UnavailableError
	if !s.ready && errors.As(werr, &ue) {
		return Result{}, werr
	}
	for _, n := range []*native{&s.stdout, &s.stderr} {
		b, _ := n.snapshot()
		if n == &s.stderr && backendOf(res) == sandbox.BackendLandlock {
			b = []byte(strings.TrimPrefix(string(b), sandbox.LandlockPartialNotice+"\n"))
		}
		if len(b) > 0 && (failure == nil || failure.Kind != KindOutputLimit) {
			if !s.ledger.add(utf16.Encode([]rune(string(b)))) {
				failure = &Failure{KindOutputLimit, ""}
			}
		}
	}
	out := s.r.finish(s.ledger, s.value, failure, backendOf(res))
	out.Sandbox = res.Sandbox
	return out, nil
}

// backendOf names the backend that confined a run ("" unconfined).
func backendOf(res spawn.Result) string {
	if res.Sandbox == nil {
		return ""
	}
	return res.Sandbox.Backend
}

// finish composes the result and applies the ledger to the value or the
// failure message.
func (r *Runtime) finish(l *ledger, value *jsjson.Value, failure *Failure, backend string) Result {
	res := Result{Backend: backend}
	switch {
	case failure != nil && failure.Kind == KindOutputLimit:
	case failure != nil:
		if !l.fits(int64(jsjson.QuotedSize(utf16.Encode([]rune(failure.Message))))) {
			failure = &Failure{KindOutputLimit, ""}
		}
	case value != nil:
		v := jsjson.Stringify(value)
		if !l.fits(int64(len(v))) {
			failure = &Failure{KindOutputLimit, ""}
		} else {
			res.Value = json.RawMessage(v)
		}
	}
	if failure != nil && failure.Kind == KindOutputLimit {
		logs, msg := overflow(l.logs, r.maxOutput)
		res.Logs, res.Error, res.Value = logs, &Failure{KindOutputLimit, msg}, nil
		return res
	}
	res.Logs, res.Error = l.strings(), failure
	return res
}
