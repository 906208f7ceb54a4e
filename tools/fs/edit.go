package fs

import (
	"context"
	"errors"

	"github.com/dshsim/dshsim/fsobserve"
	"github.com/dshsim/dshsim/pipeline"
)

// EditValue is edit's canonical value (upstream's shape): the file's text
// before and after, LF-normalized.
type EditValue struct {
	Path   string `json:"path"`
	Before string `json:"before"`
	After  string `json:"after"`
}

func (t *Tools) runEdit(ctx context.Context, call *pipeline.Call) (pipeline.Output, error) {
	a, path, err := fileArgs(call)
	if err != nil {
		return pipeline.Output{}, err
	}
	oldS, present, ok := a.str("old_string")
	if !present || !ok || oldS == "" {
		return pipeline.Output{}, errors.New("old_string must be a non-empty string")
	}
	newS, present, ok := a.str("new_string")
	if !present || !ok {
		return pipeline.Output{}, errors.New("new_string must be a string")
	}
	if oldS == newS {
		return pipeline.Output{}, errors.New("old_string and new_string must differ")
	}
	replaceAll := string(a["replace_all"]) == "true"
	target, pol, err := t.mutationTarget(ctx, call, a, path)
	if err != nil {
		return pipeline.Output{}, err
	}
	session := call.SessionID()
	var guard *fsobserve.EditGuard
	if t.cfg.Observations != nil {
		g, err := t.cfg.Observations.EditIntent(session, target.Key, target.Display)
		if err != nil {
			return pipeline.Output{}, Remedy(err)
		}
		guard = &g
	}
	if err := t.fence(target, pol); err != nil {
		return pipeline.Output{}, err
	}
	res, err := t.cfg.FS.EditText(ctx, target, fsobserve.Edit{Old: oldS, New: newS, ReplaceAll: replaceAll}, guard)
	if err != nil {
		return pipeline.Output{}, Remedy(err)
	}
	t.record(session, target.Key, fsobserve.Present(res.Version))
	text := "The file " + target.Display + " has been updated successfully."
	if replaceAll {
		text = "The file " + target.Display + " has been updated. All occurrences were successfully replaced."
	}
	return pipeline.Output{
		Value:   marshal(EditValue{Path: target.Display, Before: res.Before, After: res.After}),
		Content: []pipeline.Block{pipeline.TextBlock(text)},
		Meta:    marshal(DiffMeta{Diffs: Diffs(path, res.Before, res.After)}),
	}, nil
}
