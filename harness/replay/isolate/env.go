package isolate

import (
	"slices"
	"strings"

	"github.com/dshsim/dshsim/sandbox"
)

// envKeep are the environment variables a child inherits: the locale, the
// search path, who and where the user is (HOME is only a name: nothing of
// the host's home is in the child's root), the terminal's kind, and the Go
// runtime's own settings (a test binary's coverage directory among them).
var envKeep = []string{
	"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TERM", "COLORTERM", "NO_COLOR",
	"GOCOVERDIR", "GODEBUG", "GOGC", "GOMAXPROCS", "GOMEMLIMIT", "GORACE", "GOTRACEBACK",
}

// envKeepPrefixes are the prefixes of the other names a child inherits:
// the locale's categories and this project's own settings (DSHSIM_*).
var envKeepPrefixes = []string{"LC_", "DSHSIM_"}

// ChildEnv is the environment a child starts with: the entries of environ
// whose name is one of envKeep, starts with one of envKeepPrefixes, or is
// one of extra (names a caller passes on: [Options.Env]), in order, and
// never one whose name counts as a secret ([sandbox.SecretName]: a word
// KEY, TOKEN, SECRET, PASSWORD, AUTH, CREDENTIAL... in it), whoever asked
// for it. An entry without "=" is dropped. Pure.
func ChildEnv(environ, extra []string) []string {
	out := make([]string, 0, len(envKeep))
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || sandbox.SecretName(name) {
			continue
		}
		keep := slices.Contains(envKeep, name) || slices.Contains(extra, name)
		for _, p := range envKeepPrefixes {
			keep = keep || strings.HasPrefix(name, p)
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}
