// Package outfile names and creates the private files that hold the complete
// output of a process stream once it outgrows its in-memory tail, in
// upstream's shape (dsh-subprocess-local's spawn.ts):
//
//	<tmpdir>/dsh-subprocess-XXXXXX/dsh-subprocess-<pid>-<n>-<12hex>-<label>.log
//
// where XXXXXX is mkdtemp's six random letters and digits ([PrivateDir],
// through [Mkdtemp], the repository's one temporary-name maker),
// <pid> the process id, <n> a counter shared by every file this process
// creates (starting at 1), <12hex> six random bytes and <label> the stream
// ("stdout" or "stderr"). The directory is 0700, each file 0600 and created
// exclusively ([Create]). The path is the model's only way back to the head of
// a long output, so its shape is an interface; its random parts are not, and
// a replay compares them modulo [Pattern].
//
// # Imports
//
// outfile imports the standard library only; the executors (sandbox/spawn,
// tools/jobs) import it, and the replay makes its upstream-shaped workspace
// (/tmp/acp-snap-cwd-XXXXXX) with [Mkdtemp].
package outfile
