package replay

import (
	"context"
	"encoding/gob"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/dshsim/dshsim/llm"
	"github.com/dshsim/dshsim/llm/deepseek"
	"github.com/dshsim/dshsim/pipeline"
)

// TestRelayStream: the child's end streams a request through the host's
// end: each chunk arrives as sent, a failed call is the *llm.Failure the
// host sent, a call the child cancels is stopped on the host.
func TestRelayStream(t *testing.T) {
	child, host := net.Pipe()
	defer child.Close()
	c := newRelayClient(child)
	dec, enc := gob.NewDecoder(host), gob.NewEncoder(host)
	go func() {
		var f relayFrame
		if dec.Decode(&f) != nil || f.Model == nil || f.Model.System != "sys" || f.Session != "s1" {
			host.Close()
			return
		}
		name := "bash"
		_ = enc.Encode(relayFrame{ID: f.ID, Chunk: &llm.Chunk{Type: llm.TextDelta, Text: "hel"}})
		_ = enc.Encode(relayFrame{ID: f.ID, Chunk: &llm.Chunk{Type: llm.ToolCallDelta, Name: &name, ArgumentsDelta: "{"}})
		_ = enc.Encode(relayFrame{ID: f.ID, Done: true, Failure: &llm.Failure{Code: "RATE_LIMIT", Message: "slow down", ProviderRetryAfterMs: 1000}})
	}()
	var got []llm.Chunk
	err := c.Stream(context.Background(), deepseek.Request{System: "sys"}, "s1", func(ch llm.Chunk) error { got = append(got, ch); return nil })
	var f *llm.Failure
	if !errors.As(err, &f) || f.Code != "RATE_LIMIT" || f.ProviderRetryAfterMs != 1000 {
		t.Fatalf("err %v, want the host's failure", err)
	}
	if len(got) != 2 || got[0].Text != "hel" || got[1].Name == nil || *got[1].Name != "bash" {
		t.Errorf("chunks %+v", got)
	}
}

// TestRelayBroken: once the host's end is gone, a stream and a question
// fail with one error saying so, and a later call fails at once.
func TestRelayBroken(t *testing.T) {
	child, host := net.Pipe()
	c := newRelayClient(child)
	go func() {
		var f relayFrame
		_ = gob.NewDecoder(host).Decode(&f)
		host.Close()
	}()
	err := c.Stream(context.Background(), deepseek.Request{}, "s", func(llm.Chunk) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "the relay to dsh-record broke") {
		t.Fatalf("stream: %v", err)
	}
	if _, err := c.ask(context.Background(), pipeline.ApprovalRequest{ToolName: "bash", CallID: "c1"}); err == nil || !strings.Contains(err.Error(), "the relay to dsh-record broke") {
		t.Fatalf("ask: %v", err)
	}
}

// TestRedactChunk: the key is replaced wherever a chunk carries text.
func TestRedactChunk(t *testing.T) {
	const key = "sk-relay-test-key"
	name := "tool " + key
	c := llm.Chunk{Type: llm.BlockEnd, Text: "a" + key, ID: key, ArgumentsDelta: key + "}", Name: &name,
		Block:  &llm.Block{Type: llm.ToolCall, Text: key, ID: key, Name: key, Arguments: key, ToolCallID: key, Content: []llm.Block{{Text: key}}},
		Reason: &llm.Finish{Kind: llm.Error, Failure: &llm.Failure{Message: "your key " + key + " is invalid"}}}
	r := redactChunk(c, key)
	for _, s := range []string{r.Text, r.ID, r.ArgumentsDelta, *r.Name, r.Block.Text, r.Block.ID, r.Block.Name, r.Block.Arguments, r.Block.ToolCallID, r.Block.Content[0].Text, r.Reason.Failure.Message} {
		if strings.Contains(s, key) || !strings.Contains(s, "<redacted>") {
			t.Errorf("%q: the key is not redacted", s)
		}
	}
	if !strings.Contains(c.Reason.Failure.Message, key) || *c.Name != name {
		t.Error("redactChunk changed the chunk it was given")
	}
}
