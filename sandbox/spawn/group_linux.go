package spawn

import (
	"bytes"
	"os"
	"strconv"
)

// groupAlive reports whether a live process (any state but zombie or dead)
// belongs to process group pgid, from /proc/<pid>/stat.
func groupAlive(pgid int) bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		state, pgrp, ok := statFields(data)
		if ok && pgrp == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// statFields parses the state and the process group of a /proc/<pid>/stat
// line: "pid (comm) state ppid pgrp ..."; comm may hold spaces and ')'.
func statFields(data []byte) (state byte, pgrp int, ok bool) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(data[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	n, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], n, true
}
