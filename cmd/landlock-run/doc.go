// Command landlock-run applies a Landlock allow-list to itself, then executes
// a command. See package internal/landlockrun for the contract.
//
//	landlock-run [--abi-cap N] [--ro <path>]... [--rw <path>]... -- <argv>...
//	landlock-run --probe
//	landlock-run --abi
package main
