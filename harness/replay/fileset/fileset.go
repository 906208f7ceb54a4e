package fileset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// JournalFile is the journal of a replacement that has decided on the new
// set; its presence means the set may be half replaced.
const JournalFile = ".dshsim-journal"

// tempPrefix starts every temporary file of a replacement (the journal's
// own included), so no reader of the directory takes one for its file.
const tempPrefix = ".dshsim-new."

// entry is one line of the journal: Temp replaces Name.
type entry struct {
	Name string `json:"name"`
	Temp string `json:"temp"`
}

// Replace replaces the files of dir named in names with files[name], all or
// none, and returns the names it changed, in the order given (a file that
// already holds its content is left alone). A cancelled ctx, checked once
// every new file is durable, leaves the old set and returns its cause.
func Replace(ctx context.Context, dir string, names []string, files map[string][]byte) (changed []string, err error) {
	unlock, err := lock(dir, syscall.LOCK_EX)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if _, err := recoverLocked(dir); err != nil {
		return nil, err
	}
	var entries []entry
	decided := false
	defer func() {
		if err != nil && !decided {
			for _, e := range entries {
				os.Remove(filepath.Join(dir, e.Temp))
			}
		}
	}()
	for _, name := range names {
		if err := checkName(name); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
		}
		data, ok := files[name]
		if !ok {
			return nil, fmt.Errorf("%s: no content given", filepath.Join(dir, name))
		}
		if old, err := os.ReadFile(filepath.Join(dir, name)); err == nil && bytes.Equal(old, data) {
			continue
		}
		temp, err := writeTemp(dir, name, data)
		if err != nil {
			return nil, err
		}
		entries = append(entries, entry{Name: name, Temp: temp})
	}
	if len(entries) == 0 {
		return nil, nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("interrupted before any file was replaced (%w)", context.Cause(ctx))
	}
	if err := writeJournal(dir, entries); err != nil {
		return nil, err
	}
	// Decided: from here on the new set wins; what interrupts the renames
	// is completed by the next Replace or Recover, so the temporaries stay.
	decided = true
	for _, e := range entries {
		changed = append(changed, e.Name)
	}
	return changed, commit(dir, entries)
}

// commit renames the journal's temporaries over their files (those still
// there), then removes the journal, syncing the directory after each.
func commit(dir string, entries []entry) error {
	for _, e := range entries {
		err := os.Rename(filepath.Join(dir, e.Temp), filepath.Join(dir, e.Name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("replace %s: %w", filepath.Join(dir, e.Name), err)
		}
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(dir, JournalFile)); err != nil {
		return err
	}
	return syncDir(dir)
}

// Recover completes a replacement of dir that was interrupted after it
// decided (its journal present) and removes the temporaries of one that had
// not; it says what it did ("" when there was nothing to do).
func Recover(dir string) (string, error) {
	unlock, err := lock(dir, syscall.LOCK_EX)
	if err != nil {
		return "", err
	}
	defer unlock()
	return recoverLocked(dir)
}

func recoverLocked(dir string) (string, error) {
	entries, err := readJournal(dir)
	if err != nil {
		return "", err
	}
	did := ""
	if entries != nil {
		if err := commit(dir, entries); err != nil {
			return "", err
		}
		names := make([]string, len(entries))
		for i, e := range entries {
			names[i] = e.Name
		}
		did = "completed an interrupted replacement of " + strings.Join(names, ", ")
	}
	stray, err := filepath.Glob(filepath.Join(dir, tempPrefix+"*"))
	if err != nil {
		return "", err
	}
	for _, p := range stray {
		if err := os.Remove(p); err != nil {
			return "", err
		}
	}
	if len(stray) > 0 && did == "" {
		did = fmt.Sprintf("removed %d temporary file(s) of a replacement interrupted before it decided", len(stray))
	}
	return did, nil
}

// Check fails when dir holds the journal of an interrupted replacement:
// its files may be half replaced. Readers call it under [Shared].
func Check(dir string) error {
	_, err := os.Lstat(filepath.Join(dir, JournalFile))
	switch {
	case err == nil:
		return fmt.Errorf("%s: a replacement of its files was interrupted after it decided, so they may be half old, half new; a writer (dsh-replay -refresh or -update) completes it first", filepath.Join(dir, JournalFile))
	case errors.Is(err, fs.ErrNotExist):
		return nil
	}
	return err
}

// Shared takes dir's shared lock, which a [Replace] in progress excludes,
// and checks it ([Check]); release it when done reading.
func Shared(dir string) (release func(), err error) {
	unlock, err := lock(dir, syscall.LOCK_SH)
	if err != nil {
		return nil, err
	}
	if err := Check(dir); err != nil {
		unlock()
		return nil, err
	}
	return unlock, nil
}

// checkName refuses a name that is not a plain file name of the directory,
// or is one of the package's own.
func checkName(name string) error {
	switch {
	case name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') || strings.ContainsRune(name, 0):
		return errors.New("not a plain file name")
	case name == JournalFile || strings.HasPrefix(name, tempPrefix):
		return errors.New("a name of the replacement's own files")
	}
	return nil
}

// writeTemp writes data to a new temporary file for name in dir, with
// name's mode (0644 for a new file), and syncs it.
func writeTemp(dir, name string, data []byte) (string, error) {
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(filepath.Join(dir, name)); err == nil {
		mode = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, tempPrefix+name+".")
	if err != nil {
		return "", err
	}
	temp := filepath.Base(f.Name())
	err = f.Chmod(mode)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return temp, nil
}

// writeJournal makes the journal durable: a synced temporary renamed into
// place, then the directory synced.
func writeJournal(dir string, entries []entry) error {
	data, err := json.Marshal(entries)
	if err != nil {
		return err
	}
	temp, err := writeTemp(dir, JournalFile, append(data, '\n'))
	if err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(dir, temp), filepath.Join(dir, JournalFile)); err != nil {
		os.Remove(filepath.Join(dir, temp))
		return err
	}
	return syncDir(dir)
}

// readJournal reads dir's journal (nil when there is none), refusing an
// entry that is not the package's own.
func readJournal(dir string) ([]entry, error) {
	path := filepath.Join(dir, JournalFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var entries []entry
	if err := json.Unmarshal(data, &entries); err != nil || entries == nil {
		return nil, fmt.Errorf("%s: not a journal of this package (%v): nothing replaced", path, err)
	}
	for i, e := range entries {
		if err := checkName(e.Name); err != nil {
			return nil, fmt.Errorf("%s: entry %d: name %q: %v: nothing replaced", path, i+1, e.Name, err)
		}
		if !strings.HasPrefix(e.Temp, tempPrefix+e.Name+".") || strings.ContainsRune(e.Temp, '/') {
			return nil, fmt.Errorf("%s: entry %d: temp %q is not a temporary of %q: nothing replaced", path, i+1, e.Temp, e.Name)
		}
	}
	return entries, nil
}

// lock takes dir's flock of kind how; the returned func releases it.
func lock(dir string, how int) (func(), error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(d.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	return func() { d.Close() }, nil
}

// syncDir makes dir's entries durable.
func syncDir(dir string) error { return syncPath(dir) }

// PlaceDir renames the complete directory tmp to out, which must not exist,
// once every file and directory under tmp is durable and ctx is not
// cancelled (a cancelled one leaves tmp for the caller to remove and returns
// its cause); the rename is then made durable. A new set of files written
// whole beside out and placed so is all there or not there at all.
func PlaceDir(ctx context.Context, tmp, out string) error {
	err := filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !(d.IsDir() || d.Type().IsRegular()) {
			return err // a symlink has nothing of its own to sync
		}
		return syncPath(p)
	})
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted before %s was written (%w)", out, context.Cause(ctx))
	}
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("%s exists: nothing replaced", out)
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	return syncDir(filepath.Dir(out))
}

// syncPath fsyncs one file or directory.
func syncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
