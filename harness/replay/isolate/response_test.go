package isolate_test

import (
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/harness/replay/isolate"
)

// The size of its response is the request (a decimal number of bytes).
func init() {
	isolate.Serve("test-answer-bytes", func(ctx context.Context, req []byte) ([]byte, error) {
		n, err := strconv.Atoi(string(req))
		if err != nil {
			return nil, err
		}
		return []byte(strings.Repeat("x", n)), nil
	})
}

// TestMaxResponseBoundsTheAnswer: a child's answer of exactly
// Options.MaxResponse bytes is read; one byte more is an error naming the
// bound, and the caller gets no response.
func TestMaxResponseBoundsTheAnswer(t *testing.T) {
	isolate.Require(t)
	const n = 3000
	// What the child writes on descriptor 3: its envelope, one JSON line.
	env, err := json.Marshal(struct {
		Response []byte `json:"response,omitempty"`
	}{[]byte(strings.Repeat("x", n))})
	if err != nil {
		t.Fatal(err)
	}
	size := int64(len(env) + 1)
	run := func(limit int64) ([]byte, error) {
		return isolate.Run(context.Background(), "test-answer-bytes", []byte(strconv.Itoa(n)), isolate.Options{Stderr: io.Discard, MaxResponse: limit})
	}
	out, err := run(size)
	if err != nil || len(out) != n {
		t.Fatalf("an answer of exactly the bound (%d bytes): %d bytes, %v; want the response", size, len(out), err)
	}
	out, err = run(size - 1)
	if err == nil || out != nil || !strings.Contains(err.Error(), "more than "+strconv.FormatInt(size-1, 10)+" bytes") {
		t.Fatalf("an answer one byte past the bound: %d bytes, %v; want an error naming the bound %d", len(out), err, size-1)
	}
}
