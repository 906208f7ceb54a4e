// Command escape-probe performs one file operation and reports its errno; see
// package github.com/dshsim/dshsim/harness/escape/probe.
package main
