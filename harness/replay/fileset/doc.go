// Package fileset replaces a set of files of one directory all at once: a
// reader, or a later run, sees either every old file or every new one, never
// a mix, whatever interrupts the writer (a signal, a kill, a crash).
//
// # How
//
// [Replace] takes the directory's lock (flock, exclusive), completes an
// earlier replacement that was interrupted ([Recover]), then:
//
//  1. writes each changed file to a temporary file in the same directory
//     (.dshsim-new.<name>.<random>, the old file's mode) and fsyncs it;
//  2. checks the context: a cancelled one removes the temporaries and
//     returns its cause, the old set untouched;
//  3. writes the journal (.dshsim-journal: each temporary and the file it
//     replaces) through a temporary, fsyncs it, renames it into place and
//     fsyncs the directory: from here on the new set is decided;
//  4. renames each temporary over its file, fsyncs the directory, removes
//     the journal and fsyncs the directory again.
//
// An interruption before step 3 leaves the old set and stray temporaries,
// which nothing reads and the next [Replace] or [Recover] removes. One after
// it leaves the journal: [Recover] (which every [Replace] runs first)
// renames the temporaries still there over their files, which makes the new
// set whole, and removes the journal. A reader that cannot write the
// directory (a contained replay sees the host read-only) checks with
// [Check], under the shared lock ([Shared]) that a writer's exclusive one
// excludes: a journal present is an error naming it and the command that
// completes it, so a half-replaced set is never read as a recording.
//
// The journal is input like any file of a recording: [Recover] accepts only
// entries whose names are plain file names of the directory (no separator,
// not . or ..), whose temporaries carry the prefix, and whose files are not
// the package's own; anything else is an error naming the journal, and
// nothing is renamed.
//
// # Imports
//
// The standard library only.
package fileset
