package shell

import (
	"encoding/binary"
	"testing"
	"time"
)

func TestAccepts(t *testing.T) {
	// the shell (group 10) waited at its prompt when the send began
	o := begin(time.Time{}, 10, true, 0)
	for i, c := range []struct {
		pgid    int
		waiting bool
		want    bool
	}{
		{10, true, false}, // still the prompt's wait
		{20, true, true},  // another group's wait is taken at once
		{20, false, false},
		{10, false, false}, // the shell left its wait...
		{10, true, true},   // ...so its next wait is taken (a builtin read)
	} {
		if got := o.accepts(c.pgid, c.waiting); got != c.want {
			t.Errorf("step %d accepts(%d, %v) = %v, want %v", i+1, c.pgid, c.waiting, got, c.want)
		}
	}
	if !begin(time.Time{}, 10, false, 0).accepts(10, true) {
		t.Error("a group not waiting when the send began is taken when it waits")
	}
}

func TestPoll(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	waitsOn := func(g int) func(int) bool { return func(p int) bool { return p == g } }
	for _, c := range []struct {
		name    string
		s       sample
		waiting func(int) bool
		want    verdict
	}{
		{"bare prompt, quiet a poll interval, shell in front", sample{now: at(pollInterval), prompts: 1, atPrompt: true, fg: 10, shellPgid: 10}, waitsOn(0), inputWait},
		{"bare prompt, not quiet long enough", sample{now: at(pollInterval - 1), prompts: 1, atPrompt: true, fg: 10, shellPgid: 10}, waitsOn(0), pending},
		{"bare prompt from before the send", sample{now: at(time.Second), prompts: 0, atPrompt: true, fg: 10, shellPgid: 10}, waitsOn(0), pending},
		{"prompt with text after it", sample{now: at(time.Second), prompts: 1, atPrompt: false, fg: 10, shellPgid: 10}, waitsOn(0), pending},
		{"bare prompt, a job in front", sample{now: at(time.Second), prompts: 1, atPrompt: true, fg: 20, shellPgid: 10}, waitsOn(0), pending},
		{"a job reads the terminal after the probe delay", sample{now: at(exactProbeAfter), lastOutput: at(exactProbeAfter), fg: 20, shellPgid: 10}, waitsOn(20), inputWait},
		{"a job reads the terminal before the probe delay", sample{now: at(exactProbeAfter - 1), lastOutput: at(exactProbeAfter), fg: 20, shellPgid: 10}, waitsOn(20), pending},
		{"no foreground group", sample{now: at(time.Second), lastOutput: at(time.Second)}, waitsOn(0), pending},
		{"silent for the idle limit", sample{now: at(idleSilence), fg: 20, shellPgid: 10}, waitsOn(0), idle},
		{"silent just under it", sample{now: at(idleSilence - 1), fg: 20, shellPgid: 10}, waitsOn(0), pending},
		{"silent after a prompt: the handoff grace", sample{now: at(idleSilence + handoffGrace - 1), prompts: 1, fg: 20, shellPgid: 10}, waitsOn(0), pending},
	} {
		o := begin(t0, 10, true, 0)
		if got := o.poll(c.s, c.waiting); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// fakeMemory is a process's memory at one address and its fdinfo.
type fakeMemory struct {
	addr uint64
	data []byte
	info string
}

func (f fakeMemory) mem(_ int, addr uint64, n int) []byte {
	if addr != f.addr {
		return nil
	}
	return f.data[:min(n, len(f.data))]
}
func (f fakeMemory) fdinfo(int, uint64) string { return f.info }

func TestWaitsOnStdin(t *testing.T) {
	pollfds := func(fds ...[2]int) []byte { // fd, events
		b := make([]byte, 8*len(fds))
		for i, p := range fds {
			binary.LittleEndian.PutUint32(b[8*i:], uint32(int32(p[0])))
			binary.LittleEndian.PutUint16(b[8*i+4:], uint16(p[1]))
		}
		return b
	}
	amd := syscallTables["amd64"]
	for _, c := range []struct {
		name string
		line string
		mem  fakeMemory
		want bool
	}{
		{"read of 0", "0 0x0 0x7ffd 0x400 0x0 0x0 0x0 0x7ffd 0x7f00", fakeMemory{}, true},
		{"read of 3", "0 0x3 0x7ffd 0x400 0x0 0x0 0x0 0x7ffd 0x7f00", fakeMemory{}, false},
		{"pselect with 0 in the read set", "270 0x1 0x1000 0x0 0x0 0x0 0x0 0x0 0x0", fakeMemory{addr: 0x1000, data: []byte{1, 0, 0, 0, 0, 0, 0, 0}}, true},
		{"pselect without it", "270 0x5 0x1000 0x0 0x0 0x0 0x0 0x0 0x0", fakeMemory{addr: 0x1000, data: []byte{0x10, 0, 0, 0, 0, 0, 0, 0}}, false},
		{"select of no descriptor", "23 0x0 0x1000 0x0 0x0 0x0 0x0 0x0 0x0", fakeMemory{addr: 0x1000, data: []byte{1}}, false},
		{"poll of 0 for input", "7 0x2000 0x2 0xffffffff 0x0 0x0 0x0 0x0 0x0", fakeMemory{addr: 0x2000, data: pollfds([2]int{4, 1}, [2]int{0, 1})}, true},
		{"poll of 0 for output", "271 0x2000 0x1 0x0 0x0 0x8 0x0 0x0 0x0", fakeMemory{addr: 0x2000, data: pollfds([2]int{0, 4})}, false},
		{"epoll with 0 in its set", "232 0x5 0x3000 0x1 0xffffffff 0x0 0x0 0x0 0x0", fakeMemory{info: "pos:\t0\nflags:\t02\ntfd:        0 events:       19 data: 0\n"}, true},
		{"epoll without it", "281 0x5 0x3000 0x1 0xffffffff 0x0 0x0 0x0 0x0", fakeMemory{info: "tfd:       10 events: 19\n"}, false},
		{"another call", "230 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0", fakeMemory{}, false},
	} {
		sc, ok := parseSyscall(c.line)
		if !ok {
			t.Errorf("%s: %q not parsed", c.name, c.line)
			continue
		}
		if got := waitsOnStdin(c.mem, 1, sc, amd); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	for _, line := range []string{"running", "-1 0x7ffd 0x7f00", "0 0x0", "x 0x0 0x0 0x0 0x0 0x0 0x0"} {
		if _, ok := parseSyscall(line); ok {
			t.Errorf("parseSyscall(%q) parsed", line)
		}
	}
	for stat, want := range map[string]int{"12 (a) b) S 1 34 56 0": 34, "12 (bash) S 1 12 12 34816 12": 12} {
		if g, ok := parsePgrp(stat); !ok || g != want {
			t.Errorf("parsePgrp(%q) = %d, %v; want %d", stat, g, ok, want)
		}
	}
	if _, ok := parsePgrp("12 (bash"); ok {
		t.Error("a stat line without its comm's end parsed")
	}
}

func TestScreenBare(t *testing.T) {
	for _, c := range []struct {
		chunks []string
		want   bool
	}{
		{[]string{"dsh> "}, false}, // no prompt marker
		{[]string{"out\n\x1b]133;D;0\x07dsh> "}, true},
		{[]string{"\x1b]133;D;0\x07", "dsh", "> "}, true},
		{[]string{"\x1b]133;D;0\x07dsh> x"}, false},
		{[]string{"\x1b]133;D;0\x07dsh> ", "more text after the prompt"}, false},
		{[]string{"\x1b]133;D;0\x07dsh> x", "\x1b]133;D;0\x07dsh> "}, true},
	} {
		s := screen{maxBytes: 1 << 20, maxLines: 100}
		for _, ch := range c.chunks {
			s.write([]byte(ch))
		}
		if s.bare() != c.want {
			t.Errorf("%q: bare %v, want %v", c.chunks, s.bare(), c.want)
		}
	}
}
