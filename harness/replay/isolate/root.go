package isolate

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// systemDirs are the host's top-level entries a child's root holds, each
// read-only: where the programs a replay runs live (bash, node, rg, git,
// python3, bwrap, the shared libraries they load). On a merged-/usr host
// all but usr are symlinks, recreated as such; an entry the host lacks is
// left out.
var systemDirs = []string{"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32"}

// emptyDirs are the top-level directories a child's root holds empty and
// read-only, made for it: /opt, where recordings probe a path outside the
// workspace that every Linux host has (a workdir, a symlink's target).
var emptyDirs = []string{"opt"}

// etcKeep are the /etc entries a child's root holds, read-only: what the
// dynamic linker, name lookups of files, time zones, Debian's alternatives
// and Python's site configuration read, and the host's name (which uname
// tells anyway; recordings read /etc/hostname as a file outside the
// workspace). Everything else of /etc is left out: shadow, gshadow, ssh
// host keys, ssl private keys, credential helpers (gitconfig), resolver
// and package manager settings.
var etcKeep = []string{
	"alternatives", "host.conf", "hostname", "hosts", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime",
	"mtab", "nsswitch.conf", "os-release", "protocols", "python3", "services", "timezone",
}

// etcMade are the /etc files a child's root holds that are made, not
// bound: passwd and group, with only the entries of the ids the child can
// meet (see [idLines]).
var etcMade = []string{"passwd", "group"}

// EtcAllowed reports whether the /etc entry name is bound into a child's
// root: one of etcKeep, or python3.<minor> (a Python's own site
// configuration). Pure.
func EtcAllowed(name string) bool {
	if slices.Contains(etcKeep, name) {
		return true
	}
	minor, ok := strings.CutPrefix(name, "python3.")
	if !ok || minor == "" {
		return false
	}
	_, err := strconv.Atoi(minor)
	return err == nil
}

// idLines keeps the lines of a passwd or group file (content) whose id
// (the third field) is one of ids, and empties a group's member list (the
// fourth field): a child's /etc names root, nobody and its own user, and
// no other account of the host. Pure.
func idLines(content string, ids []int, group bool) string {
	var b strings.Builder
	for line := range strings.SplitSeq(content, "\n") {
		f := strings.Split(line, ":")
		if len(f) < 4 {
			continue
		}
		id, err := strconv.Atoi(f[2])
		if err != nil || !slices.Contains(ids, id) {
			continue
		}
		if group {
			f = append(f[:3], "")
		}
		b.WriteString(strings.Join(f, ":"))
		b.WriteByte('\n')
	}
	return b.String()
}

// reservedRoots are the top-level directories of a child's root that are
// made for it (a share may not lie there).
var reservedRoots = []string{"etc", "dev", "proc", "tmp"}

// shareTarget says how the shared path p (absolute, symlink-free) enters a
// child's root: bound at its own path (bind), or not at all because it
// lies in a system directory the root holds anyway (visible). A share of
// "/", or one in /etc, /dev or /proc (made for the child) is an error; one
// in /tmp is bound into the private /tmp. Pure.
func shareTarget(p string) (bind bool, err error) {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return false, fmt.Errorf("isolate: share %q: want an absolute, clean path", p)
	}
	if p == "/" {
		return false, errors.New("isolate: cannot share / itself")
	}
	top, rest, _ := strings.Cut(p[1:], "/")
	switch {
	case slices.Contains(systemDirs, top):
		return false, nil
	case top == "tmp" && rest == "":
		return false, errors.New("isolate: cannot share /tmp itself")
	case top != "tmp" && slices.Contains(reservedRoots, top):
		return false, fmt.Errorf("isolate: cannot share %s: the child's /%s is made for it", p, top)
	}
	return true, nil
}
