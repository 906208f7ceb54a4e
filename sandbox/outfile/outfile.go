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

// mkdtemp's alphabet (libuv uv_fs_mkdtemp): the six X become these.
const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// PrivateDir creates a new 0700 directory <os.TempDir()>/dsh-subprocess-XXXXXX
// and returns its path.
func PrivateDir() (string, error) {
	base := os.TempDir()
	for range 100 {
		var rb [6]byte
		if _, err := rand.Read(rb[:]); err != nil {
			return "", fmt.Errorf("outfile: random name: %w", err)
		}
		name := []byte(Prefix + "XXXXXX")
		for i, b := range rb {
			name[len(Prefix)+i] = alphabet[int(b)%len(alphabet)]
		}
		d := filepath.Join(base, string(name))
		err := os.Mkdir(d, 0o700)
		if err == nil {
			return d, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("outfile: %w", err)
		}
	}
	return "", fmt.Errorf("outfile: no free name %sXXXXXX in %s after 100 tries", Prefix, base)
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
