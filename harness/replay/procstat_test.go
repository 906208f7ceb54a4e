package replay

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		line    string
		want    procStat
		wantErr string
	}{
		{line: "42 (bash) S 1 42 42 0 -1", want: procStat{PID: 42, Comm: "bash", State: 'S', PPID: 1, PGrp: 42, Session: 42}},
		// comm holds spaces and parentheses: it ends at the line's last ')'.
		{line: "7 (a) b (c)) R 3 5 6 0", want: procStat{PID: 7, Comm: "a) b (c)", State: 'R', PPID: 3, PGrp: 5, Session: 6}},
		{line: "9 bash S 1 9 9", wantErr: "no (comm) field"},
		{line: "x (bash) S 1 9 9", wantErr: `field pid: "x " is not a process id followed by one space`},
		{line: "0 (bash) S 1 9 9", wantErr: `field pid: "0 " is not a process id followed by one space`},
		{line: "9 (bash) S 1 9", wantErr: "3 fields after (comm), want at least 4 (state ppid pgrp session)"},
		{line: "9 (bash) SS 1 9 9", wantErr: `field state: "SS" is not one letter`},
		{line: "9 (bash) S 1 9 x", wantErr: `field session: "x" is not a number`},
	}
	for _, tt := range tests {
		got, err := parseStat(tt.line)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("parseStat(%q) error %v, want %q", tt.line, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseStat(%q): %v", tt.line, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parseStat(%q) (-want +got):\n%s", tt.line, diff)
		}
	}
}

func TestParseNSpid(t *testing.T) {
	tests := []struct {
		status  string
		want    []int
		wantErr string
	}{
		{status: "Name:\tbash\nNSpid:\t812\t23\t1\nPPid:\t1\n", want: []int{812, 23, 1}},
		{status: "NSpid:\t5\n", want: []int{5}},
		{status: "Name:\tbash\n", wantErr: "no NSpid line"},
		{status: "NSpid:\t\n", wantErr: "field NSpid: empty"},
		{status: "NSpid:\t5\t0\n", wantErr: `field NSpid: "0" is not a process id`},
	}
	for _, tt := range tests {
		got, err := parseNSpid(tt.status)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("parseNSpid(%q) error %v, want %q", tt.status, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !cmp.Equal(tt.want, got) {
			t.Errorf("parseNSpid(%q) = %v, %v; want %v", tt.status, got, err, tt.want)
		}
	}
}

// TestSettledState: only a process that can make no progress on its own
// lets its job count as settled.
func TestSettledState(t *testing.T) {
	for s, want := range map[byte]bool{'S': true, 'T': true, 't': true, 'Z': true, 'X': true, 'R': false, 'D': false, 'I': false, 'W': false} {
		if got := settledState(s); got != want {
			t.Errorf("settledState(%c) = %v, want %v", s, got, want)
		}
	}
}

// TestBusyMember: a busy process counts when its session or its process
// group is a leader's; a busy stranger and a sleeping member do not.
func TestBusyMember(t *testing.T) {
	leaders := map[int]bool{100: true}
	tests := []struct {
		name  string
		procs []procStat
		want  int // busy pid, 0 for none
	}{
		{"sleeping members", []procStat{{PID: 100, State: 'S', PGrp: 100, Session: 100}, {PID: 101, State: 'S', PGrp: 100, Session: 100}}, 0},
		{"busy by session", []procStat{{PID: 101, State: 'R', PGrp: 101, Session: 100}}, 101},
		{"busy by group", []procStat{{PID: 102, State: 'D', PGrp: 100, Session: 7}}, 102},
		{"busy stranger", []procStat{{PID: 200, State: 'R', PGrp: 200, Session: 200}}, 0},
		{"zombie member", []procStat{{PID: 103, State: 'Z', PGrp: 100, Session: 100}}, 0},
	}
	for _, tt := range tests {
		p, ok := busyMember(tt.procs, leaders)
		if got := map[bool]int{true: p.PID}[ok]; got != tt.want {
			t.Errorf("%s: busy %d (%v), want %d", tt.name, got, ok, tt.want)
		}
	}
}

func TestPidAt(t *testing.T) {
	ns := []int{812, 23, 1}
	for _, tt := range []struct {
		level int
		want  int
		ok    bool
	}{{0, 812, true}, {2, 1, true}, {3, 0, false}, {-1, 0, false}} {
		if got, ok := pidAt(ns, tt.level); got != tt.want || ok != tt.ok {
			t.Errorf("pidAt(%v, %d) = %d, %v; want %d, %v", ns, tt.level, got, ok, tt.want, tt.ok)
		}
	}
}
