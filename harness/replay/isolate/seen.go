//go:build linux

package isolate

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// Containment is what a contained child could see and do of the host, as
// PID 1 built it and reports it with the response ([Options.Seen]).
type Containment struct {
	// Root lists the entries of the child's root: what of the host each
	// is, or what was made for it.
	Root []string `json:"root"`
	// IDs are the uid and gid the run ran as, and its groups.
	IDs string `json:"ids"`
	// Privileges are the run stage's.
	Privileges string `json:"privileges"`
	// Network is the network it had.
	Network string `json:"network"`
	// Bounds are the run's resource bounds.
	Bounds Bounds `json:"bounds"`
}

// describeRun fills what c says of the run stage started with cfg.
func (c *Containment) describeRun(cfg config) {
	uid, gid := cfg.runIDs()
	c.IDs = fmt.Sprintf("uid %d and gid %d, the same on the host, no other host id mapped", uid, gid)
	if cfg.UID == 0 {
		c.IDs += ", no supplementary groups"
	} else if groups, err := unix.Getgroups(); err == nil && len(groups) > 0 {
		c.IDs += fmt.Sprintf(", the caller's %d supplementary groups kept (an unprivileged user namespace cannot drop them)", len(groups))
	}
	c.Privileges = "no capabilities (the bounding set empty), no_new_privs, not dumpable"
	c.Bounds = cfg.Bounds
}

// String is c on one line.
func (c Containment) String() string {
	return "root: " + strings.Join(c.Root, "; ") + ". ids: " + c.IDs + ". privileges: " + c.Privileges +
		". network: " + c.Network + ". bounds: " + c.Bounds.String()
}
