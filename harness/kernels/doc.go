// Package kernels checks the Landlock layer across ABIs and real kernels
// (docs/escape-and-kernels.md reads the matrix): layer 1 caps the runner's
// ABI on this machine, layer 2 boots real Debian kernels under qemu.
//
// # Probes
//
// [Probes] are single operations of escape-probe run under the real runner
// with a workspace-write policy (landlock-run [--abi-cap N] --ro / --rw
// /dev/null --rw /tmp --rw <ws> -- escape-probe OP ARGS): write inside and
// outside, truncate outside (ABI 3), rename and link across workspace
// directories (REFER, ABI 2), hard link and rename out, mkfifo, unlink,
// re-exec then write, chmod, and a device ioctl (ABI 5). Each runs in a fresh
// layout; the effect location is snapshotted before and after (a snapshot
// that fails stops the agent: no end record, so the column fails, never "no
// change"). [Cell] turns a result into ok / denied / refused / GAP / 125 /
// reached / blocked.
//
// # The default Landlock path
//
// In every column, on this machine and in the guests, the agent also runs
// every probe on the stack's default Landlock path: package sandbox/chain
// with Landlock as its only backend (as on a host without bwrap, capped at
// the column's cap like the runner), which confines in this process and
// falls back to the runner where it cannot, by way of sandbox/spawn, the
// executor every caller uses; those rows form a second block of the matrix.
// Their gaps are admitted by the path's own partial notice (the in-process
// path writes the runner's, [AdmitInprocGap]), and [Check] fails a column
// where the default path and the runner disagree on any probe, on the
// enforcement or on the notice, where it fell back to the runner on a
// Landlock kernel, or where it ran anything on a kernel without Landlock.
//
// # Agent and console
//
// [Agent] runs the runner's own reports (--abi, --probe), every probe (under
// the runner and on the default path) and, in guests and on the uncapped
// host, the stack's confiner (package sandbox/chain over the default Linux
// chain: bwrap, then Landlock in this process), and prints one "@@DSHSIM {json}" line
// per record. Layer 1 runs it in-process and parses its output with the same
// [ParseConsole] that reads a guest's serial console, so both layers share
// one path.
//
// # Layer 2
//
// [Cache] downloads the kernels and busybox-static with apt-get download
// against a private sources list, lists and cache (Dir::Etc::SourceList,
// Dir::State::Lists, Dir::Cache under the cache directory, default
// $XDG_CACHE_HOME/dshsim-kernels or /var/cache/dshsim-kernels), so the
// machine's apt state is untouched, and unpacks them with dpkg -x.
// [Initramfs] packs busybox, /init ([InitScript]) and static
// (CGO_ENABLED=0) builds of landlock-run, escape-probe and matrix-agent with
// cpio -o -H newc -R 0:0 | gzip (every entry root's, / searchable, whoever
// builds it). [Boot] runs qemu-system-x86_64 (software emulation, two vCPUs)
// and returns the console and the wall time.
//
// # Checks
//
// [Check] fails an unadmitted GAP ([AdmitGap]: only the partial notice
// admits, and only for rights newer than the governed ABI), a kernel without
// Landlock where anything but the runner's exit 125 with its fatal line
// happened or where the stack's confiner did not say SANDBOX_UNAVAILABLE, a
// runner failure on a Landlock kernel, and a write confined by the stack's
// confiner that landed.
//
// # Running
//
//	go run ./cmd/kernel-matrix            # compare snapshots/kernel-matrix.txt
//	DSHSIM_UPDATE=1 go run ./cmd/kernel-matrix
//	go run ./cmd/kernel-matrix -layer1    # no qemu; prints the layer-1 table
//
// # Imports
//
// Test tooling: it imports the sandbox, the escape corpus and sandboxtest
// (to build the guest binaries); no product package imports it.
package kernels
