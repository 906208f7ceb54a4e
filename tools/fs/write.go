package fs

import (
	"context"
	"errors"

	"github.com/dshsim/dshsim/fsobserve"
	"github.com/dshsim/dshsim/pipeline"
)

// WriteValue is write's canonical value (upstream's shape): before is the
// previous text (LF-normalized), null for a new file or one that cannot be
// diffed.
type WriteValue struct {
	Path      string  `json:"path"`
	Operation string  `json:"operation"`
	Before    *string `json:"before"`
	After     string  `json:"after"`
}

// DiffMeta is the persisted meta of write and edit.
type DiffMeta struct {
	Diffs []DiffEntry `json:"diffs"`
}

func (t *Tools) runWrite(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
	a, path, err := fileArgs(call)
	if err != nil {
		return pipeline.Output{}, err
	}
	content, present, ok := a.str("content")
	if !present || !ok {
		return pipeline.Output{}, errors.New("content must be a string")
	}
	target, pol, err := t.mutationTarget(ctx, call, a, path)
	if err != nil {
		return pipeline.Output{}, err
	}
	session := call.SessionID()
	intent := fsobserve.WriteIntent{Kind: fsobserve.Unguarded}
	if t.cfg.Observations != nil {
		intent = t.cfg.Observations.WriteIntent(session, target.Key)
	}
	if err := t.fence(target, pol); err != nil {
		return pipeline.Output{}, err
	}
	res, err := t.cfg.FS.WriteText(ctx, target, content, intent)
	if err != nil {
		return pipeline.Output{}, Remedy(err)
	}
	t.record(session, target.Key, fsobserve.Present(res.Version))
	diffs := []DiffEntry{}
	if res.Before != nil {
		diffs = Diffs(path, *res.Before, res.After)
	}
	word := "Created file"
	if res.Operation == "update" {
		word = "Updated file"
	}
	return pipeline.Output{
		Value:   marshal(WriteValue{Path: target.Display, Operation: res.Operation, Before: res.Before, After: res.After}),
		Content: []pipeline.Block{pipeline.TextBlock(fileEnvelope(target.Display, word))},
		Meta:    marshal(DiffMeta{Diffs: diffs}),
	}, nil
}
