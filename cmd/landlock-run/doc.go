// Command landlock-run applies a Landlock allow-list to itself, then executes
// a command. See package sandbox/landlock for the contract.
//
//	landlock-run [--abi-cap N] [--ro <path>]... [--rw <path>]... -- <argv>...
//	landlock-run --probe
//	landlock-run --abi
package main
