package spawn

import (
	"errors"
	"fmt"

	"github.com/dshsim/dshsim/sandbox"
	"github.com/dshsim/dshsim/sandbox/cgroup"
)

// delegation is the cgroup v2 subtree this process's calls are bounded in
// (cgroup.Delegated; a test replaces it).
var delegation = cgroup.Delegated

// bounded is how a call with limits l is bounded: in a cgroup of its own
// when the host delegates a cgroup v2 subtree to this process (the group,
// and l's part still set as resource limits), else by resource limits
// alone (nil, l). A delegation whose cgroup cannot be made or prepared
// refuses the call: it never runs unbounded.
func bounded(l sandbox.Limits) (*cgroup.Group, sandbox.Limits, error) {
	d, err := delegation()
	var none *cgroup.NoDelegation
	if errors.As(err, &none) {
		return nil, l, nil
	}
	if err == nil {
		var g *cgroup.Group
		if g, err = d.New(l); err == nil {
			return g, l.GroupPart(), nil
		}
	}
	return nil, l, fmt.Errorf("spawn: the host delegates the cgroup %s to this process, but the call's cgroup cannot be made there (%v); refusing to run it unbounded", d.Dir, err)
}
