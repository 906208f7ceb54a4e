package sims

import (
	"testing"

	"github.com/dshsim/dshsim/sandbox/outfile"
)

// TestRenderSpillPathHasUpstreamsShape: the render sim's constructed
// full-output path is one the real executor could have written.
func TestRenderSpillPathHasUpstreamsShape(t *testing.T) {
	if got := outfile.Pattern.FindString(renderSpillPath); got != renderSpillPath {
		t.Errorf("%q is not upstream's /tmp/dsh-subprocess-XXXXXX/dsh-subprocess-<pid>-<n>-<12hex>-<label>.log", renderSpillPath)
	}
}
