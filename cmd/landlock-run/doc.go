// Command landlock-run applies a Landlock allow-list to itself, then executes
// a command. See package sandbox/landlock for the contract.
//
// It runs landlock.InitMain from an init function (the startup thread,
// locked by the runtime during initialisation) and never reaches main.
//
//	landlock-run [--abi-cap N] [--ro <path>]... [--rw <path>]... -- <argv>...
//	landlock-run --probe
//	landlock-run --abi
//
// A thin main: it imports sandbox/landlock (its InitMain) and nothing else of
// this module, so the runner's start-up pays for nothing else.
package main
