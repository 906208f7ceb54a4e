//go:build linux

package isolate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/dshsim/dshsim/sandbox/procfs"
)

const probeName = "isolate-probe"

// Serve is called from init because Go leaves no other way: the child is
// this same executable re-executed (/proc/self/exe), and that executable is
// dsh-replay or any test binary that links this package (CheckIsolation runs the probe), whose main the go
// tool generates; only an init function runs in every one of them before
// main, so the child becomes the probe before that main (a test run, a flag
// parse) starts.
func init() { Serve(probeName, probe) }

// Facts are what an isolated child saw of itself.
type Facts struct {
	// PID is the child's pid in its namespace (1).
	PID int `json:"pid"`
	// ProcSelf is what /proc/self names: its pid in the namespace of the
	// mounted /proc ("1" when /proc is its PID namespace's own).
	ProcSelf string `json:"procSelf"`
	// UID is its uid.
	UID int `json:"uid"`
	// TmpDev is the device of its /tmp; TmpIsTmpfs whether that is a tmpfs.
	TmpDev     uint64 `json:"tmpDev"`
	TmpIsTmpfs bool   `json:"tmpIsTmpfs"`
	// Caps are the CapInh, CapPrm, CapEff and CapAmb lines of /proc/self/status.
	Caps map[string]string `json:"caps"`
	// Wrote is the file the probe created in its /tmp ("" when none was asked for).
	Wrote string `json:"wrote,omitempty"`
}

// Probe runs a child that creates /tmp/<file> exclusively (when file is not empty) and
// reports what it saw. Tests use it to check the isolation from outside.
func Probe(ctx context.Context, file string) (Facts, error) {
	out, err := Run(ctx, probeName, []byte(file), Options{})
	if err != nil {
		return Facts{}, err
	}
	var f Facts
	if err := json.Unmarshal(out, &f); err != nil {
		return Facts{}, fmt.Errorf("isolate: probe response: %w", err)
	}
	return f, nil
}

func probe(_ context.Context, req []byte) ([]byte, error) {
	f := Facts{PID: os.Getpid(), UID: os.Getuid(), Caps: map[string]string{}}
	var st unix.Stat_t
	if err := unix.Stat("/tmp", &st); err != nil {
		return nil, err
	}
	f.TmpDev = st.Dev
	self, err := os.Readlink("/proc/self")
	if err != nil {
		return nil, err
	}
	f.ProcSelf = self
	var fs unix.Statfs_t
	if err := unix.Statfs("/tmp", &fs); err != nil {
		return nil, err
	}
	f.TmpIsTmpfs = fs.Type == unix.TMPFS_MAGIC
	status, err := procfs.Proc.Status("self")
	if err != nil {
		return nil, err
	}
	for k, v := range procfs.ParseStatus(status) {
		if strings.HasPrefix(k, "Cap") && k != "CapBnd" {
			f.Caps[k] = v
		}
	}
	if name := string(req); name != "" {
		f.Wrote = filepath.Join("/tmp", filepath.Base(name))
		// O_EXCL: a /tmp shared with another run would make one of two fail.
		w, err := os.OpenFile(f.Wrote, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, err
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
	}
	return json.Marshal(f)
}
