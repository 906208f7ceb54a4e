//go:build linux

package isolate

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
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
	Identity
	TmpFacts
	NetFacts
	View
	// Seen is what the host was told the child could see.
	Seen Containment `json:"-"`
}

// Identity is who the probe child is: its ids, groups, capabilities and
// flags.
type Identity struct {
	// PID is the child's pid in its namespace and PPID its parent's there
	// (1: PID 1 of its namespace started it).
	PID  int `json:"pid"`
	PPID int `json:"ppid"`
	// ProcSelf is what /proc/self names: its pid in the namespace of the
	// mounted /proc (PID when /proc is its PID namespace's own).
	ProcSelf string `json:"procSelf"`
	// UID is its uid.
	UID int `json:"uid"`
	// GID is its gid, Groups its supplementary groups and UIDMap its
	// /proc/self/uid_map.
	GID    int    `json:"gid"`
	Groups []int  `json:"groups"`
	UIDMap string `json:"uidMap"`
	// Caps are the CapInh, CapPrm, CapEff and CapAmb lines of /proc/self/status.
	Caps map[string]string `json:"caps"`
	// NoNewPrivs and Dumpable are its no_new_privs flag and dumpable state.
	NoNewPrivs string `json:"noNewPrivs"`
	Dumpable   int    `json:"dumpable"`
}

// TmpFacts are the probe child's /tmp.
type TmpFacts struct {
	// TmpDev is the device of its /tmp; TmpIsTmpfs whether that is a tmpfs.
	TmpDev     uint64 `json:"tmpDev"`
	TmpIsTmpfs bool   `json:"tmpIsTmpfs"`
	// TmpSize is the size of its /tmp in bytes.
	TmpSize int64 `json:"tmpSize"`
	// Wrote is the file the probe created in its /tmp ("" when none was asked for).
	Wrote string `json:"wrote,omitempty"`
}

// NetFacts are the probe child's network.
type NetFacts struct {
	// NetNS is its network namespace ("net:[<inode>]"); Interfaces the
	// interfaces it has, each with "up" or "down".
	NetNS      string   `json:"netns"`
	Interfaces []string `json:"interfaces"`
}

// View is what of the host the probe child sees and reaches.
type View struct {
	// Writes maps each path the probe was asked to create (a file, or a
	// mount it tried to make writable) to the error it got ("" when it
	// succeeded).
	Writes map[string]string `json:"writes"`
	// Root and Etc list the entries of its / and /etc.
	Root []string `json:"root"`
	Etc  []string `json:"etc"`
	// Env are the names of its environment variables.
	Env []string `json:"env"`
	// Reached maps each path of [ProbeRequest.Reach] to what reaching it
	// gave ("" when it was reached).
	Reached map[string]string `json:"reached"`
	// Specials are the sockets and FIFOs found under / (its /proc, /dev
	// and /tmp left out), when [ProbeRequest.Walk] asked.
	Specials []string `json:"specials,omitempty"`
}

// ProbeRequest is what the probe child tries.
type ProbeRequest struct {
	// File is created in the child's /tmp with O_EXCL ("" for none).
	File string `json:"file,omitempty"`
	// Create are paths the child tries to create (they should fail: the
	// host is read-only).
	Create []string `json:"create,omitempty"`
	// Overwrite are existing files the child tries to write its own content
	// back into (harmless wherever it succeeds; it should not).
	Overwrite []string `json:"overwrite,omitempty"`
	// Remount are mount points the child tries to make writable again.
	Remount []string `json:"remount,omitempty"`
	// Reach are paths the child tries to reach: a socket connected to, a
	// FIFO opened for writing, anything else opened for reading.
	Reach []string `json:"reach,omitempty"`
	// Walk lists every socket and FIFO under the child's / (Facts.Specials).
	Walk bool `json:"walk,omitempty"`
	// HostNetwork runs the child with [Options.HostNetwork]; Share,
	// TmpSize, Env and Bounds are the run's.
	HostNetwork bool     `json:"-"`
	Share       []string `json:"-"`
	TmpSize     int64    `json:"-"`
	Env         []string `json:"-"`
	Bounds      Bounds   `json:"-"`
}

// Probe runs a child that tries what req asks and reports what it saw.
// Tests use it to check the isolation from outside.
func Probe(ctx context.Context, req ProbeRequest) (Facts, error) {
	in, err := json.Marshal(req)
	if err != nil {
		return Facts{}, err
	}
	var seen Containment
	out, err := Run(ctx, probeName, in, Options{HostNetwork: req.HostNetwork, Share: req.Share, TmpSize: req.TmpSize, Env: req.Env, Bounds: req.Bounds, Seen: &seen})
	if err != nil {
		return Facts{}, err
	}
	var f Facts
	if err := json.Unmarshal(out, &f); err != nil {
		return Facts{}, fmt.Errorf("isolate: probe response: %w", err)
	}
	f.Seen = seen
	return f, nil
}

func probe(_ context.Context, data []byte) ([]byte, error) {
	var req ProbeRequest
	if len(data) > 0 {
		if err := json.Unmarshal(data, &req); err != nil {
			return nil, err
		}
	}
	f := Facts{Identity: Identity{PID: os.Getpid(), PPID: os.Getppid(), UID: os.Getuid(), Caps: map[string]string{}}, View: View{Writes: map[string]string{}}}
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
	f.TmpSize = int64(fs.Blocks) * fs.Bsize
	status, err := procfs.Proc.Status("self")
	if err != nil {
		return nil, err
	}
	for k, v := range procfs.ParseStatus(status) {
		if strings.HasPrefix(k, "Cap") {
			f.Caps[k] = v
		}
		if k == "NoNewPrivs" {
			f.NoNewPrivs = v
		}
	}
	if err := selfFacts(&f); err != nil {
		return nil, err
	}
	if f.NetNS, err = netNS(); err != nil {
		return nil, err
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	for _, i := range ifs {
		state := "down"
		if i.Flags&net.FlagUp != 0 {
			state = "up"
		}
		f.Interfaces = append(f.Interfaces, i.Name+" "+state)
	}
	tryWrites(req, &f)
	f.Reached = map[string]string{}
	for _, p := range req.Reach {
		f.Reached[p] = errText(reach(p))
	}
	if req.Walk {
		f.Specials = specials("/", map[string]bool{"/proc": true, "/dev": true, "/tmp": true})
	}
	if req.File != "" {
		f.Wrote = filepath.Join("/tmp", filepath.Base(req.File))
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

// tryWrites tries to create each of req.Create, to write each of
// req.Overwrite and to remount each of req.Remount read-write, recording the
// errors in f.Writes.
func tryWrites(req ProbeRequest, f *Facts) {
	for _, p := range req.Create {
		w, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			err = w.Close()
		}
		f.Writes[p] = errText(err)
	}
	for _, p := range req.Overwrite {
		f.Writes["overwrite "+p] = errText(overwrite(p))
	}
	for _, p := range req.Remount {
		f.Writes["remount "+p] = errText(unix.Mount("", p, "", unix.MS_REMOUNT|unix.MS_BIND, ""))
	}
}

// overwrite writes p's content back into p.
func overwrite(p string) error {
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	w, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// selfFacts fills f's ids, groups, uid map, dumpable state, the entries of
// / and /etc and the environment's names.
func selfFacts(f *Facts) error {
	f.GID = os.Getgid()
	groups, err := os.Getgroups()
	if err != nil {
		return err
	}
	f.Groups = groups
	m, err := os.ReadFile("/proc/self/uid_map")
	if err != nil {
		return err
	}
	f.UIDMap = strings.Join(strings.Fields(string(m)), " ")
	if f.Dumpable, err = unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return err
	}
	for dir, out := range map[string]*[]string{"/": &f.Root, "/etc": &f.Etc} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range ents {
			*out = append(*out, e.Name())
		}
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		f.Env = append(f.Env, name)
	}
	return nil
}

// reach tries to reach p: connect to it (a socket), open it for writing
// without blocking (a FIFO), or open it for reading (anything else).
func reach(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	switch {
	case fi.Mode()&fs.ModeSocket != 0:
		c, err := net.Dial("unix", p)
		if err == nil {
			c.Close()
		}
		return err
	case fi.Mode()&fs.ModeNamedPipe != 0:
		fd, err := unix.Open(p, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}
	r, err := os.Open(p)
	if err == nil {
		r.Close()
	}
	return err
}

// specials lists the sockets and FIFOs under dir, skipping the directories
// in skip and what cannot be read.
func specials(dir string, skip map[string]bool) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case d.IsDir() && skip[p]:
			return filepath.SkipDir
		case d.Type()&(fs.ModeSocket|fs.ModeNamedPipe) != 0:
			out = append(out, p)
		}
		return nil
	})
	return out
}
