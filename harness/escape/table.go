package escape

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/dshsim/dshsim/sandbox"
)

// Modes are the confined modes the corpus runs under, in column order.
var Modes = []sandbox.Mode{sandbox.ReadOnly, sandbox.WorkspaceWrite}

func short(m sandbox.Mode) string {
	switch m {
	case sandbox.ReadOnly:
		return "ro"
	case sandbox.DangerFullAccess:
		return "dfa"
	}
	return "ww"
}

// RunAll runs every attempt under every backend in every mode as this
// process's identity, cfg.Workers at a time (an [Attempt.Exclusive] one
// alone), and returns the results in backend, mode, attempt order. The first
// error stops the run.
func RunAll(ctx context.Context, cfg Config, attempts []Attempt, backends []Backend) ([]Result, error) {
	type task struct {
		i int
		a Attempt
		b Backend
		m sandbox.Mode
	}
	var tasks []task
	for _, b := range backends {
		for _, m := range modesOf(b) {
			for _, a := range attempts {
				if a.Mode != "" && a.Mode != m {
					continue // a hostile recording runs in its own mode only
				}
				tasks = append(tasks, task{len(tasks), a, b, m})
			}
		}
	}
	workers := cfg.Workers
	if workers <= 0 {
		workers = 8
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make([]Result, len(tasks))
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	queue := make(chan task)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range queue {
				lock, unlock := exclusive.RLock, exclusive.RUnlock
				if t.a.Exclusive() {
					lock, unlock = exclusive.Lock, exclusive.Unlock
				}
				lock()
				r, err := RunOne(ctx, cfg, t.a, t.b, t.m)
				unlock()
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("%s under %s/%s/%s: %w", t.a.Name, t.b.Name, Self().Name, t.m, err)
					cancel()
				}
				mu.Unlock()
				out[t.i] = r
				if cfg.Logf != nil && err == nil && r.Outcome != Blocked {
					cfg.Logf("%s %s/%s/%s: %s %s %v", t.a.Name, t.b.Name, r.Identity, short(t.m), r.Outcome, r.Why, r.Changes)
				}
			}
		}()
	}
	for _, t := range tasks {
		if ctx.Err() != nil {
			break
		}
		queue <- t
	}
	close(queue)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

// Unadmitted returns the got-through results their backend's report does not
// admit, and every runner failure (on this machine the runners must start).
func Unadmitted(rs []Result) []Result {
	var bad []Result
	for _, r := range rs {
		if (r.Outcome == GotThrough && !r.Admitted) || r.Outcome == RunnerFailed {
			bad = append(bad, r)
		}
	}
	return bad
}

// Section markers of the golden tables: each identity's rows start with
// SectionPrefix + the identity's name and end at the next section or at
// SectionEnd, so a run that cannot take an identity (root) compares the
// golden without that identity's sections ([DropIdentity]).
const (
	SectionPrefix = "[identity: "
	SectionEnd    = "[end of identities]"
)

// DropIdentity removes the sections of identity name from a rendered table
// (see [SectionPrefix]).
func DropIdentity(text, name string) string {
	var b strings.Builder
	dropping := false
	for _, line := range strings.SplitAfter(text, "\n") {
		switch {
		case strings.HasPrefix(line, SectionPrefix):
			dropping = strings.HasPrefix(line, SectionPrefix+name+" ")
		case strings.HasPrefix(line, SectionEnd):
			dropping = false
		}
		if !dropping {
			b.WriteString(line)
		}
	}
	return b.String()
}

func identityLabel(id Identity) string {
	if id.Name == Root.Name {
		return "root = uid 0"
	}
	return "user = an unprivileged uid (65534 when the harness is root)"
}

// Table renders the results as a golden table: the backends' reports, then
// per identity a section with one row per attempt, one column per
// backend/mode, and a footnote per notable cell, then the attacks.
func Table(title string, attempts []Attempt, backends []Backend, ids []Identity, rs []Result) []byte {
	t := &table{attempts: attempts, backends: backends, results: rs, idx: map[string]Result{}, nameW: len("attempt")}
	for _, r := range rs {
		t.idx[r.Attempt+"|"+r.Backend+"|"+r.Identity+"|"+string(r.Mode)] = r
	}
	for _, a := range attempts {
		t.nameW = max(t.nameW, len(a.Name))
	}
	t.intro(title)
	t.reports()
	for _, id := range ids {
		t.section(id)
	}
	t.b.WriteString("\n" + SectionEnd + "\n\nattacks:\n")
	for _, a := range attempts {
		fmt.Fprintf(&t.b, "  %-*s  %s", t.nameW, a.Name, a.Attack)
		if a.Capability != "" {
			fmt.Fprintf(&t.b, " [as root only: needs %s]", a.Capability)
		}
		t.b.WriteString("\n")
	}
	return []byte(t.b.String())
}

// table is a golden table being written.
type table struct {
	b        strings.Builder
	attempts []Attempt
	backends []Backend
	results  []Result
	// idx finds a result by attempt|backend|identity|mode.
	idx map[string]Result
	// nameW is the width of the attempt column.
	nameW int
}

// cellW is the width of one mode's cell.
const cellW = 8

// groupW is the width of a backend's columns: its modes, or its name.
func groupW(be Backend) int { return max(cellW*len(modesOf(be)), len(be.Name)+1) }

// groupPad pads a backend's mode cells to its group's width.
func groupPad(be Backend) string { return strings.Repeat(" ", groupW(be)-cellW*len(modesOf(be))) }

// intro writes the title and what the table's cells and columns mean.
func (t *table) intro(title string) {
	b := &t.b
	fmt.Fprintf(b, "%s\n", title)
	replayed := slices.ContainsFunc(t.backends, func(be Backend) bool { return be.Name == Replayed })
	if replayed {
		fmt.Fprintf(b, "%d hostile recordings (package harness/replay/hostile: copies of upstream recordings turned against the host), each replayed\n", len(t.attempts))
		b.WriteString("by dsh-replay's contained replay (harness/replay.Replay, package harness/replay/isolate) as dsh-replay runs it; after each run\n")
	} else {
		fmt.Fprintf(b, "%d attempts, each run through sandbox/spawn (new session, descriptors close-on-exec, the backend's confiner); after each run\n", len(t.attempts))
	}
	b.WriteString("the host checks the outside paths for existence, kind, content, mode, owner, mtime, inode flags and extended attributes\n")
	b.WriteString("(names and values, every namespace the identity can list: user, and trusted and security for root), and what the harness saw\n")
	if replayed {
		b.WriteString("(a connection to its listener on the host's loopback, a process left running, the replay's results saying a step got through)\n")
		b.WriteString("cells: blocked (the attack ran to its end, or was refused before anything ran, and nothing changed) | GOT = got through |\n")
		b.WriteString("  n/a (no contained replay can be made here) | runner-failed (nothing changed, but the attack did not run to its end:\n")
		b.WriteString("  the footnote says what was missing)\n")
		b.WriteString("columns: the mode the recording runs its attack in, stated or approved by itself (ww = workspace-write, dfa =\n")
		b.WriteString("  danger-full-access; - where it does not run)\n")
		b.WriteString("\nbackend reports:\n")
		return
	}
	b.WriteString("cells: blocked | GOT = got through (see the footnote: admitted by the report, or NOT ADMITTED) | n/a | runner-failed\n")
	b.WriteString("columns: backend/mode; ro = read-only (any write counts, inside the workspace too), ww = workspace-write")
	if slices.ContainsFunc(t.backends, func(be Backend) bool { return be.Name == Unconfined }) {
		b.WriteString(",\n  dfa = danger-full-access, unconfined (an escalated call): only what changed after the call returned counts")
	}
	b.WriteString("\n")
	b.WriteString("n/a: attempts marked \"needs: root\" run only as root (the attacks list names the capability each needs).\n\nbackend reports:\n")
}

// reports writes each backend's report: its enforcement, probe, ABI, notice,
// temp area, and what it leaves ungoverned or isolates.
func (t *table) reports() {
	b := &t.b
	repW := 16
	for _, be := range t.backends {
		repW = max(repW, len(be.Name)+1)
		fmt.Fprintf(b, "  %-*s %s", repW, be.Name, be.Report.Enforcement)
		if be.Report.Probe != "" {
			fmt.Fprintf(b, "  probe %q", be.Report.Probe)
		}
		if be.Report.ABI > 0 {
			fmt.Fprintf(b, "  governs ABI %d", be.Report.ABI)
		}
		if t.anyNotice(be) {
			fmt.Fprintf(b, "  notice %q on stderr", LandlockNotice)
		}
		fmt.Fprintf(b, "  temp area %s\n", be.Report.TempArea)
		for _, u := range be.Report.Ungoverned {
			fmt.Fprintf(b, "  %-*s ungoverned: %s\n", repW, "", u)
		}
		for _, u := range be.Report.Isolated {
			fmt.Fprintf(b, "  %-*s isolates: %s\n", repW, "", u)
		}
	}
}

// anyNotice reports whether any run under backend be printed the runner's
// partial-enforcement notice.
func (t *table) anyNotice(be Backend) bool {
	for _, r := range t.results {
		if r.Backend == be.Name && r.Notice {
			return true
		}
	}
	return false
}

// section writes identity id's section: the two header lines, a row per
// attempt, and a footnote per notable cell.
func (t *table) section(id Identity) {
	b := &t.b
	fmt.Fprintf(b, "\n%s%s (%s)]\n", SectionPrefix, id.Name, identityLabel(id))
	fmt.Fprintf(b, "%-*s  %-9s", t.nameW, "attempt", "class")
	for _, be := range t.backends {
		fmt.Fprintf(b, " %-*s", groupW(be), be.Name)
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "%-*s  %-9s", t.nameW, "", "")
	for _, be := range t.backends {
		b.WriteString(" ")
		for _, m := range modesOf(be) {
			fmt.Fprintf(b, "%-*s", cellW, short(m))
		}
		b.WriteString(groupPad(be))
	}
	b.WriteString("\n")
	var notes []string
	for _, a := range t.attempts {
		fmt.Fprintf(b, "%-*s  %-9s", t.nameW, a.Name, a.Class)
		for _, be := range t.backends {
			b.WriteString(" ")
			for _, m := range modesOf(be) {
				c, note := t.cell(a, be, id, m)
				if note != "" {
					notes = append(notes, note)
				}
				fmt.Fprintf(b, "%-*s", cellW, c)
			}
			b.WriteString(groupPad(be))
		}
		b.WriteString("\n")
	}
	if len(notes) > 0 {
		fmt.Fprintf(b, "\nfootnotes (* cells, %s):\n", id.Name)
		for _, n := range notes {
			b.WriteString(n + "\n")
		}
	}
}

// cell is the text of one cell ("-" where nothing ran) and its footnote
// ("" for none): a change that got through, or a runner's failure.
func (t *table) cell(a Attempt, be Backend, id Identity, m sandbox.Mode) (text, note string) {
	r, ok := t.idx[a.Name+"|"+be.Name+"|"+id.Name+"|"+string(m)]
	if !ok {
		return "-", ""
	}
	where := fmt.Sprintf("%s %s/%s", a.Name, be.Name, short(m))
	switch r.Outcome {
	case GotThrough:
		var ch []string
		for _, x := range r.Changes {
			ch = append(ch, x.String())
		}
		return string(r.Outcome) + "*", fmt.Sprintf("GOT %s: %s\n    %s", where, strings.Join(ch, "; "), r.Why)
	case RunnerFailed:
		return string(r.Outcome), fmt.Sprintf("runner-failed %s: %s", where, r.Why)
	}
	return string(r.Outcome), ""
}
