package procfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ParseOwnerThreads returns the real user id (the first of the Uid line's
// four) and the thread count (the Threads line) of a /proc/<pid>/status
// text: what the kernel counts against the real user's RLIMIT_NPROC. Pure.
func ParseOwnerThreads(status string) (uid, threads int, err error) {
	f := ParseStatus(status)
	ids := strings.Fields(f["Uid"])
	if len(ids) == 0 {
		return 0, 0, errors.New("no Uid line")
	}
	if uid, err = strconv.Atoi(ids[0]); err != nil || uid < 0 {
		return 0, 0, fmt.Errorf("field Uid: %q is not a user id", f["Uid"])
	}
	if threads, err = strconv.Atoi(f["Threads"]); err != nil || threads < 1 {
		return 0, 0, fmt.Errorf("field Threads: %q is not a thread count", f["Threads"])
	}
	return uid, threads, nil
}

// UserTasks counts the threads of every listed process whose real user id
// is uid: the count the kernel holds against that user's RLIMIT_NPROC (as
// far as this mount shows it: processes of the same user in other PID
// namespaces count there too, unseen here). A process that ends meanwhile
// is left out; a status that does not parse is an error naming its file.
func (r Root) UserTasks(uid int) (int, error) {
	dir, err := os.Open(string(r))
	if err != nil {
		return 0, err
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return 0, err
	}
	rd := statReader{dir: int(dir.Fd())}
	n := 0
	for _, name := range names {
		if pid, err := strconv.Atoi(name); err != nil || pid <= 0 {
			continue
		}
		status, err := rd.read(name + "/status")
		if Gone(err) {
			continue
		}
		if err != nil {
			return 0, err
		}
		owner, threads, err := ParseOwnerThreads(status)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", filepath.Join(string(r), name, "status"), err)
		}
		if owner == uid {
			n += threads
		}
	}
	return n, nil
}
