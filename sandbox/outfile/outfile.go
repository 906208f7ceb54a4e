package outfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync/atomic"
)

// Prefix starts the private directory's and every file's name.
const Prefix = "dsh-subprocess-"

// Pattern matches one full-output path as [PrivateDir] and [Create] make it
// under /tmp; submatch 1 is the label. The pid, counter and random parts are
// free, everything else literal.
var Pattern = regexp.MustCompile(`/tmp/dsh-subprocess-[A-Za-z0-9]{6}/dsh-subprocess-[0-9]+-[0-9]+-[0-9a-f]{12}-(stdout|stderr)\.log`)

// counter numbers the files of this process, as upstream's module-level
// spillCounter does (pre-incremented: the first file is 1).
var counter atomic.Uint64

// alphabet is mkdtemp's (libuv's uv_fs_mkdtemp, which Node's fs.mkdtemp
// calls): each X of the template becomes one of these.
const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// Mkdtemp creates a new 0700 directory dir/<prefix>XXXXXX, the six X
// random letters and digits as Node's fs.mkdtemp spells them, and returns
// its path. It is the one temporary-name maker of this repository: the
// private output directory ([PrivateDir]) and the replay's upstream-shaped
// workspace use it.
func Mkdtemp(dir, prefix string) (string, error) {
	for range 100 {
		var rb [6]byte
		if _, err := rand.Read(rb[:]); err != nil {
			return "", fmt.Errorf("mkdtemp %s: random name: %w", filepath.Join(dir, prefix+"XXXXXX"), err)
		}
		for i, b := range rb {
			rb[i] = alphabet[int(b)%len(alphabet)]
		}
		d := filepath.Join(dir, prefix+string(rb[:]))
		err := os.Mkdir(d, 0o700)
		if err == nil {
			return d, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("mkdtemp %s: no free name after 100 tries", filepath.Join(dir, prefix+"XXXXXX"))
}

// PrivateDir creates a new 0700 directory <os.TempDir()>/dsh-subprocess-XXXXXX
// ([Mkdtemp]) and returns its path.
func PrivateDir() (string, error) {
	d, err := Mkdtemp(os.TempDir(), Prefix)
	if err != nil {
		return "", fmt.Errorf("outfile: %w", err)
	}
	return d, nil
}

// Create creates, exclusively and 0600, the next full-output file for a
// stream labelled label in dir.
func Create(dir, label string) (*os.File, error) {
	var rb [6]byte
	if _, err := rand.Read(rb[:]); err != nil {
		return nil, fmt.Errorf("outfile: random name: %w", err)
	}
	n := counter.Add(1)
	p := filepath.Join(dir, fmt.Sprintf("%s%d-%d-%s-%s.log", Prefix, os.Getpid(), n, hex.EncodeToString(rb[:]), label))
	return os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
}
