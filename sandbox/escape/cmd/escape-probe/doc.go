// Command escape-probe performs one file operation and reports its errno; see
// package github.com/dshsim/dshsim/sandbox/escape/probe.
package main
