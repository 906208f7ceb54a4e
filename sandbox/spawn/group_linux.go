package spawn

import "github.com/dshsim/dshsim/sandbox/procfs"

// groupAlive reports whether a live process (any state but zombie or dead)
// belongs to process group pgid. A stat line that does not parse is passed
// over (the kernel writes none).
func groupAlive(pgid int) bool {
	procs, _ := procfs.Proc.All()
	for _, p := range procs {
		if p.PGrp == pgid && !p.Ended() {
			return true
		}
	}
	return false
}
