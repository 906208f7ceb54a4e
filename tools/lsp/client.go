package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// client is one language server over stdio JSON-RPC 2.0 with
// Content-Length framing.
type client struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	wmu    sync.Mutex
	mu     sync.Mutex
	nextID int
	wait   map[int]chan response
	done   chan struct{} // closed when the reader ends
	exited chan struct{} // closed when the server is reaped
	err    error         // why the reader ended
	opened map[string]openDoc
}

type openDoc struct {
	version int
	text    string
}

type response struct {
	Result json.RawMessage
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
}

type message struct {
	JSONRPC string           `json:"jsonrpc"`
	ID      *json.RawMessage `json:"id,omitempty"`
	Method  string           `json:"method,omitempty"`
	Params  any              `json:"params,omitempty"`
	Result  json.RawMessage  `json:"result,omitempty"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// start starts argv in dir, inheriting files as descriptors 3, 4, ...
// (closed here once it started, or failed to), and initializes it for the
// workspace root.
func start(ctx context.Context, argv []string, files []*os.File, dir, rootURI string, env []string) (*client, error) {
	defer closeAll(files) // on every return; closing twice is harmless
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.ExtraFiles = dir, env, files
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &limitedWriter{w: &stderr, n: 4096}
	done, exited := make(chan struct{}), make(chan struct{})
	err = startHeld(cmd, done, exited)
	closeAll(files) // the server holds its own copies
	if err != nil {
		return nil, err
	}
	c := &client{cmd: cmd, stdin: stdin, wait: map[int]chan response{}, done: done, exited: exited, opened: map[string]openDoc{}}
	go c.read(bufio.NewReader(stdout), &stderr)
	params := map[string]any{
		"processId": nil, "rootUri": rootURI,
		"workspaceFolders": []any{map[string]any{"uri": rootURI, "name": "workspace"}},
		"capabilities": map[string]any{
			"general":      map[string]any{"positionEncodings": []string{"utf-16"}},
			"textDocument": map[string]any{"synchronization": map[string]any{}, "definition": map[string]any{"linkSupport": true}, "references": map[string]any{}, "implementation": map[string]any{"linkSupport": true}, "hover": map[string]any{"contentFormat": []string{"markdown", "plaintext"}}},
		},
	}
	if _, err := c.request(ctx, "initialize", params); err != nil {
		c.close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if err := c.notify("initialized", map[string]any{}); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// closeAll closes files (nil entries skipped).
func closeAll(files []*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}

// startHeld starts cmd from a goroutine locked to its thread until the
// server is reaped, then closes exited. The server's PDEATHSIG fires when
// the thread that started it ends, not the process, and a goroutine that
// locks a thread and returns ends it (the in-process Landlock path does so
// on purpose): started from any thread of the pool, the server could be
// killed in the middle of a session by an unrelated confined call. The
// server is reaped once the reader saw its stdout end (done), as
// exec.Cmd.Wait wants: it closes the pipe.
func startHeld(cmd *exec.Cmd, done <-chan struct{}, exited chan<- struct{}) error {
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		<-done
		cmd.Wait()
		close(exited)
	}()
	return <-started
}

type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(l.n, len(p))
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// read dispatches the server's frames: responses to their waiters; a
// request of the server's is answered with a null result.
func (c *client) read(r *bufio.Reader, stderr *strings.Builder) {
	defer close(c.done)
	for {
		body, err := readFrame(r)
		if err != nil {
			c.mu.Lock()
			c.err = fmt.Errorf("the language server closed its output (%v)", err)
			if s := strings.TrimSpace(stderr.String()); s != "" {
				c.err = fmt.Errorf("%w; stderr: %s", c.err, s)
			}
			c.mu.Unlock()
			return
		}
		var m message
		if json.Unmarshal(body, &m) != nil {
			continue
		}
		switch {
		case m.ID != nil && m.Method != "":
			c.write(message{JSONRPC: "2.0", ID: m.ID, Result: json.RawMessage("null")})
		case m.ID != nil:
			id, err := strconv.Atoi(string(*m.ID))
			if err != nil {
				continue
			}
			c.mu.Lock()
			ch := c.wait[id]
			delete(c.wait, id)
			c.mu.Unlock()
			if ch != nil {
				ch <- response{Result: m.Result, Error: m.Error}
			}
		}
	}
}

func readFrame(r *bufio.Reader) ([]byte, error) {
	length := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "Content-Length") {
			if length, err = strconv.Atoi(strings.TrimSpace(v)); err != nil {
				return nil, fmt.Errorf("bad Content-Length %q", v)
			}
		}
	}
	if length < 0 || length > 64<<20 {
		return nil, errors.New("missing or oversized Content-Length")
	}
	body := make([]byte, length)
	_, err := io.ReadFull(r, body)
	return body, err
}

func (c *client) write(m message) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = fmt.Fprintf(c.stdin, "Content-Length: %d\r\n\r\n%s", len(body), body)
	return err
}

func (c *client) notify(method string, params any) error {
	return c.write(message{JSONRPC: "2.0", Method: method, Params: params})
}

// request sends one request and waits for its response, the server's end
// or ctx.
func (c *client) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.nextID++
	id := c.nextID
	ch := make(chan response, 1)
	c.wait[id] = ch
	c.mu.Unlock()
	raw := json.RawMessage(strconv.Itoa(id))
	if err := c.write(message{JSONRPC: "2.0", ID: &raw, Method: method, Params: params}); err != nil {
		return nil, fmt.Errorf("write %s: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return nil, fmt.Errorf("%s failed: %s (code %d)", method, r.Error.Message, r.Error.Code)
		}
		return r.Result, nil
	case <-c.done:
		c.mu.Lock()
		defer c.mu.Unlock()
		return nil, c.err
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.wait, id)
		c.mu.Unlock()
		return nil, ctx.Err()
	}
}

// close asks the server to shut down and exit, then ends its process
// group.
func (c *client) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := c.request(ctx, "shutdown", nil); err == nil {
		c.notify("exit", nil)
	}
	c.stdin.Close()
	select {
	case <-c.exited:
	case <-time.After(time.Second):
		syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
		<-c.exited
	}
	syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL) // anything it left in its group
}
