package replay

import (
	"context"
	"encoding/json"

	"github.com/dshsim/dshsim/harness/replay/recording"
)

// ExhaustedModel is a constructed model with no reply left: its every call
// is a script's end, which the agent loop flags.
type ExhaustedModel struct{}

// Info names the model.
func (ExhaustedModel) Info() ModelInfo {
	return ModelInfo{Config: json.RawMessage(`{}`), Provider: "test", Model: "exhausted"}
}

// Call answers that no reply is left.
func (ExhaustedModel) Call(context.Context, ModelRequest, func(json.RawMessage) error) (recording.Reply, error) {
	return recording.Reply{}, &errScriptExhausted{"no reply left"}
}
