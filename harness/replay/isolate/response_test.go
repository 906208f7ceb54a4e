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

// TestMaxResponseBoundsTheAnswer: a child's response of exactly
// Options.MaxResponse bytes is read; one byte more is an error naming the
// bound, and the caller gets no response.
func TestMaxResponseBoundsTheAnswer(t *testing.T) {
	isolate.Require(t)
	const n = 3000
	run := func(limit int64) ([]byte, error) {
		return isolate.Run(context.Background(), "test-answer-bytes", []byte(strconv.Itoa(n)), isolate.Options{Stderr: io.Discard, MaxResponse: limit})
	}
	out, err := run(n)
	if err != nil || len(out) != n {
		t.Fatalf("a response of exactly the bound (%d bytes): %d bytes, %v; want the response", n, len(out), err)
	}
	out, err = run(n - 1)
	if err == nil || out != nil || !strings.Contains(err.Error(), "more than "+strconv.Itoa(n-1)+" bytes") {
		t.Fatalf("a response one byte past the bound: %d bytes, %v; want an error naming the bound %d", len(out), err, n-1)
	}
}

// TestEnvelopeBoundHoldsTheEncodedResponse: the envelope of a response of the bound fits its
// read bound whatever the response's length modulo 3.
func TestEnvelopeBoundHoldsTheEncodedResponse(t *testing.T) {
	for n := int64(0); n < 10; n++ {
		env, err := json.Marshal(struct {
			Response []byte `json:"response"`
		}{make([]byte, n)})
		if err != nil {
			t.Fatal(err)
		}
		if got := isolate.EnvelopeBound(n); int64(len(env)) > got || got-int64(len(env)) > 64<<10 {
			t.Errorf("EnvelopeBound(%d) = %d for an envelope of %d bytes", n, got, len(env))
		}
	}
}
