package procfs

import (
	"fmt"
	"os"
	"strings"
)

// Mount is one line of a mount table (/proc/<pid>/mountinfo): which
// filesystem (Dev, its "major:minor") shows which of its directories
// (Root, "/" for the whole filesystem) at which path (Point).
type Mount struct {
	Dev, Root, Point, FSType, Source string
}

// ParseMountInfo parses a /proc/<pid>/mountinfo text: per line "id parent
// major:minor root mount-point options [optional...] - fstype source
// super-options", with space, tab, newline and backslash in paths written
// as octal escapes (\040). A malformed line is an error naming its number.
func ParseMountInfo(text string) ([]Mount, error) {
	var out []Mount
	for i, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		sep := -1
		for j := 6; j < len(f); j++ {
			if f[j] == "-" {
				sep = j
				break
			}
		}
		if len(f) < 7 || sep < 0 || sep+2 >= len(f) {
			return nil, fmt.Errorf("mountinfo line %d: want \"id parent major:minor root mount-point options ... - fstype source options\", got %q", i+1, line)
		}
		out = append(out, Mount{Dev: f[2], Root: unescapeMount(f[3]), Point: unescapeMount(f[4]), FSType: f[sep+1], Source: unescapeMount(f[sep+2])})
	}
	return out, nil
}

// unescapeMount undoes the kernel's octal escapes of a mountinfo path (\040
// space, \011 tab, \012 newline, \134 backslash).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// MountInfo returns the mount table of a process by its name under r
// ("self" or a pid of the mount's namespace).
func (r Root) MountInfo(name string) ([]Mount, error) {
	b, err := os.ReadFile(string(r) + "/" + name + "/mountinfo")
	if err != nil {
		return nil, err
	}
	return ParseMountInfo(string(b))
}
