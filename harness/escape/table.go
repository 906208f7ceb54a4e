package escape

import (
	"context"
	"fmt"
	"strings"

	"github.com/dshsim/dshsim/sandbox"
)

// Modes are the confined modes the corpus runs under, in column order.
var Modes = []sandbox.Mode{sandbox.ReadOnly, sandbox.WorkspaceWrite}

func short(m sandbox.Mode) string {
	if m == sandbox.ReadOnly {
		return "ro"
	}
	return "ww"
}

// RunAll runs every attempt under every backend, identity and mode.
func RunAll(ctx context.Context, cfg Config, attempts []Attempt, backends []Backend, ids []Identity) ([]Result, error) {
	var out []Result
	for _, b := range backends {
		for _, id := range ids {
			for _, m := range Modes {
				for _, a := range attempts {
					r, err := RunOne(ctx, cfg, a, b, id, m)
					if err != nil {
						return out, fmt.Errorf("%s under %s/%s/%s: %w", a.Name, b.Name, id.Name, m, err)
					}
					if cfg.Logf != nil && r.Outcome != Blocked {
						cfg.Logf("%s %s/%s/%s: %s %s %v", a.Name, b.Name, id.Name, short(m), r.Outcome, r.Why, r.Changes)
					}
					out = append(out, r)
				}
			}
		}
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

// Table renders the results as the golden table: one row per attempt, one
// column per backend/identity/mode, then a footnote per notable cell.
func Table(title string, attempts []Attempt, backends []Backend, ids []Identity, rs []Result) []byte {
	idx := map[string]Result{}
	for _, r := range rs {
		idx[r.Attempt+"|"+r.Backend+"|"+r.Identity+"|"+string(r.Mode)] = r
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", title)
	fmt.Fprintf(&b, "%d attempts; after each run the host checks the outside paths for existence, kind, content, mode, owner, mtime and user xattrs\n", len(attempts))
	b.WriteString("cells: blocked | GOT = got through (see the footnote: admitted by the report, or NOT ADMITTED) | n/a | runner-failed\n")
	b.WriteString("columns: backend/identity/mode; ro = read-only (any write counts, inside the workspace too), ww = workspace-write\n")
	idNames := make([]string, len(ids))
	for i, id := range ids {
		idNames[i] = id.Name
		if id.Name == "root" {
			idNames[i] = "root = uid 0"
		} else {
			idNames[i] = fmt.Sprintf("user = uid %d", id.UID)
		}
	}
	fmt.Fprintf(&b, "identities: %s\n\nbackend reports:\n", strings.Join(idNames, ", "))
	for _, be := range backends {
		fmt.Fprintf(&b, "  %-14s %s", be.Name, be.Report.Enforcement)
		if be.Report.Probe != "" {
			fmt.Fprintf(&b, "  probe %q", be.Report.Probe)
		}
		if be.Report.ABI > 0 {
			fmt.Fprintf(&b, "  governs ABI %d", be.Report.ABI)
		}
		notices := 0
		for _, r := range rs {
			if r.Backend == be.Name && r.Notice {
				notices++
			}
		}
		if notices > 0 {
			fmt.Fprintf(&b, "  notice %q on stderr", LandlockNotice)
		}
		fmt.Fprintf(&b, "  temp area %s\n", be.Report.TempArea)
		for _, u := range be.Report.Ungoverned {
			fmt.Fprintf(&b, "  %-14s ungoverned: %s\n", "", u)
		}
	}
	nameW := len("attempt")
	for _, a := range attempts {
		if len(a.Name) > nameW {
			nameW = len(a.Name)
		}
	}
	const cell = 8
	groupW := cell * len(Modes)
	b.WriteString("\n")
	fmt.Fprintf(&b, "%-*s  %-9s", nameW, "attempt", "class")
	for _, be := range backends {
		for _, id := range ids {
			fmt.Fprintf(&b, " %-*s", groupW, be.Name+"/"+id.Name)
		}
	}
	b.WriteString("\n")
	fmt.Fprintf(&b, "%-*s  %-9s", nameW, "", "")
	for range backends {
		for range ids {
			b.WriteString(" ")
			for _, m := range Modes {
				fmt.Fprintf(&b, "%-*s", cell, short(m))
			}
		}
	}
	b.WriteString("\n")
	var notes []string
	for _, a := range attempts {
		fmt.Fprintf(&b, "%-*s  %-9s", nameW, a.Name, a.Class)
		for _, be := range backends {
			for _, id := range ids {
				b.WriteString(" ")
				for _, m := range Modes {
					r, ok := idx[a.Name+"|"+be.Name+"|"+id.Name+"|"+string(m)]
					c := "-"
					if ok {
						c = string(r.Outcome)
						where := fmt.Sprintf("%s %s/%s/%s", a.Name, be.Name, id.Name, short(m))
						switch r.Outcome {
						case GotThrough:
							c += "*"
							var ch []string
							for _, x := range r.Changes {
								ch = append(ch, x.String())
							}
							notes = append(notes, fmt.Sprintf("GOT %s: %s\n    %s", where, strings.Join(ch, "; "), r.Why))
						case RunnerFailed:
							notes = append(notes, fmt.Sprintf("runner-failed %s: %s", where, r.Why))
						}
					}
					fmt.Fprintf(&b, "%-*s", cell, c)
				}
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\nn/a: attempts marked \"needs: root\" run only as root.\n")
	if len(notes) > 0 {
		b.WriteString("\nfootnotes (* cells):\n")
		for _, n := range notes {
			b.WriteString(n + "\n")
		}
	}
	b.WriteString("\nattacks:\n")
	for _, a := range attempts {
		fmt.Fprintf(&b, "  %-*s  %s\n", nameW, a.Name, a.Attack)
	}
	return []byte(b.String())
}
