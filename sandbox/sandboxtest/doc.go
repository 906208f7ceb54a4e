// Package sandboxtest is test support for the sandbox, in the manner of
// go-landlock's lltest: it builds the landlock-run runner once per test
// binary, answers whether this machine can confine at all (the kernel's
// Landlock ABI, a usable bubblewrap), and makes the scratch directories a
// sandbox test needs. Only _test.go files and the test tooling under harness/
// import it; no product package does.
//
// # The runner
//
//	func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }
//
//	runner := sandboxtest.Runner(t) // built on first use, removed after the last test
//
// [Runner] builds cmd/landlock-run from this module's source the first time a
// test asks, into a temporary directory that [Main] removes when the tests
// are done; a test binary that did not route TestMain through [Main] fails
// rather than leave the binary behind. [Build] and [BuildRunner] are the same
// build for tooling that manages its own directory (the sims, the kernel
// matrix, the escape corpus): CGO_ENABLED=0, -trimpath, -buildvcs=false,
// -ldflags "-s -w", a small static binary that starts fastest and also runs
// in an initramfs without a libc. Binaries are never committed.
//
// # Capabilities
//
// [RequireLandlock] and [RequireBwrap] skip a test that needs what this
// machine lacks, with a message naming the missing capability; [LandlockABI]
// and [Bwrap] answer the same questions without skipping. [Condition]
// answers the testscript conditions [landlock:N] (the kernel's Landlock ABI
// is at least N) and [bwrap] (bubblewrap's probe succeeds here); an unknown
// condition is an error, so a misspelt one cannot silently skip a script.
// The bwrap answer is the provider's own probe (sandbox.ProbeBwrap), run
// once per test binary.
//
// [CheckNoCapabilities] reads the /proc/self/status a confined command
// printed and fails a test unless the command holds no capability at all
// (the runner and the in-process path drop them, as bwrap's profile does).
//
// # Scratch directories
//
// [TempDir] makes a directory outside /tmp, under [ScratchRoot] (/var/tmp, or
// $DSHSIM_SCRATCH when set: a test or CI that wants to see nothing is left
// behind points it at a fresh directory), removed when the test ends;
// [MkdirScratch] is the same for tooling that removes its own directory: Landlock's workspace-write grants the host /tmp wholesale and
// bwrap mounts a fresh tmpfs over it, so a workspace or an "outside" target
// under /tmp (where t.TempDir lives) could not show the workspace boundary.
// [UsableScratchRoot] checks the root before a command starts (an existing
// directory it may write; each error names the variable).
// [Leftovers] lists what directories still hold, for a test that checks a
// run left nothing behind in its scratch root or TMPDIR.
//
// # Processes
//
// [InDir] finds the processes working in a directory; [Marker] makes a
// unique `sleep` length and [Running] lists the live processes whose command
// line holds it: both by host pid through /proc, so a check that a run left
// nothing running sees into a bwrap sandbox's PID namespace too.
//
// # Imports
//
// sandboxtest imports package sandbox, the syscall layer
// sandbox/internal/llsys and the /proc reader sandbox/procfs only: not
// sandbox/landlock, whose own tests use it, and nothing outside sandbox/.
package sandboxtest
