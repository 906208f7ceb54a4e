package sandboxtest

import (
	"os"
	"strconv"
	"strings"
)

// Alive reports whether process pid exists and is not a zombie, read from
// /proc: the outside check that a sandboxed run left nothing running.
func Alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && !strings.HasPrefix(string(b[i+1:]), " Z")
}
