package replay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/dshsim/dshsim/harness/replay/recording"
)

// Shard selects shard Index (1-based) of Count.
type Shard struct{ Index, Count int }

// ParseShard parses "i/n" with 1 <= i <= n.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("-shard %q: want i/n with 1 <= i <= n, e.g. 1/2", s)
	}
	return Shard{Index: i, Count: n}, nil
}

// RunOptions select and schedule recordings.
type RunOptions struct {
	Options
	// Run selects recordings whose name matches (nil: all).
	Run *regexp.Regexp
	// Parallel is the number of concurrent replays (0: number of cores).
	Parallel int
	// Shard, when Count > 0, keeps every Count-th recording of the sorted list.
	Shard Shard
	// Starting is called as each recording's replay starts, with its
	// directory; may be nil. Calls may come from several goroutines at once.
	Starting func(dir string)
	// Progress is called after each recording (done, total, latest result),
	// one call at a time; may be nil.
	Progress func(done, total int, r *Result)
}

// Discover expands the arguments into recording directories: an argument that
// is a recording is itself; any other directory contributes each of its
// subdirectories (a subdirectory that is not a recording is reported by the
// replay as a missing-file error, never skipped), except that one which is
// no recording, has subdirectories and no workspace/ is a tree of
// recordings, as upstream's repository lays out its front ends'
// (examples/headless-agent/tests/snapshots/...), expanded in turn. The
// result is sorted by name.
func Discover(args []string) ([]string, error) {
	var dirs []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("%s: not a directory (want a recording or a directory of recordings)", a)
		}
		if recording.IsRecording(a) {
			dirs = append(dirs, a)
			continue
		}
		found, err := discoverTree(a)
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: holds no recordings (no input.json/session.jsonl, no subdirectories)", a)
		}
		dirs = append(dirs, found...)
	}
	sort.SliceStable(dirs, func(i, j int) bool { return filepath.Base(dirs[i]) < filepath.Base(dirs[j]) })
	return dirs, nil
}

// discoverTree are the recordings under dir, which is none: each
// subdirectory, or the recordings of a subdirectory that is a tree.
func discoverTree(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if !isTree(sub) {
			dirs = append(dirs, sub)
			continue
		}
		found, err := discoverTree(sub)
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, found...)
	}
	return dirs, nil
}

// isTree reports whether dir is no recording but a tree of them: it has
// subdirectories, none of them a workspace seed.
func isTree(dir string) bool {
	if recording.IsRecording(dir) {
		return false
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	subs := 0
	for _, e := range ents {
		if e.IsDir() {
			if e.Name() == recording.WorkspaceDir {
				return false
			}
			subs++
		}
	}
	return subs > 0
}

// Select applies the name filter and the shard.
func Select(dirs []string, o RunOptions) []string {
	var out []string
	k := 0
	for _, d := range dirs {
		if o.Run != nil && !o.Run.MatchString(filepath.Base(d)) {
			continue
		}
		if o.Shard.Count > 0 && k%o.Shard.Count != o.Shard.Index-1 {
			k++
			continue
		}
		k++
		out = append(out, d)
	}
	return out
}

// Run replays dirs concurrently and returns the results in dirs order.
func Run(ctx context.Context, dirs []string, o RunOptions) []*Result {
	par := o.Parallel
	if par <= 0 {
		par = runtime.NumCPU()
	}
	results := make([]*Result, len(dirs))
	var (
		mu   sync.Mutex
		done int
		wg   sync.WaitGroup
	)
	sem := make(chan struct{}, par)
	for i, d := range dirs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if o.Starting != nil {
				o.Starting(d)
			}
			r := Replay(ctx, d, o.Options)
			results[i] = r
			mu.Lock()
			done++
			if o.Progress != nil {
				o.Progress(done, len(dirs), r)
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	return results
}

// AllMatch reports whether every result matched (false for an empty run).
func AllMatch(rs []*Result) bool {
	if len(rs) == 0 {
		return false
	}
	for _, r := range rs {
		if r.Verdict != Match {
			return false
		}
	}
	return true
}
