// Command escape-probe performs one file operation and reports its errno; see
// package github.com/dshsim/dshsim/harness/escape/probe.
//
// A thin main over harness/escape/probe, which it alone imports.
package main
