package sessionquery

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/dshsim/dshsim/pipeline/session"
)

// headerMax bounds the first line of a stored log that Store reads to learn
// its session id (a header is a few hundred bytes).
const headerMax = 64 << 10

// Store resolves a session id to the log in dir (a *.jsonl file, read
// only) whose header has that id: the store of the deployment's sessions,
// every workspace's. The tools then read only those of the caller's
// workspace. A file that is not a readable log is passed over.
func Store(dir string) func(id string) (Source, bool) {
	return func(id string) (Source, bool) {
		if id == "" {
			return nil, false
		}
		paths, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		if err != nil {
			return nil, false
		}
		for _, p := range paths {
			if h, ok := readHeader(p); ok && h.ID == id {
				return stored{path: p, header: h}, true
			}
		}
		return nil, false
	}
}

// readHeader reads the header line of the log at path.
func readHeader(path string) (session.Header, bool) {
	f, err := os.Open(path)
	if err != nil {
		return session.Header{}, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), headerMax)
	if !sc.Scan() {
		return session.Header{}, false
	}
	var h session.Header
	if json.Unmarshal(sc.Bytes(), &h) != nil || h.Type != "session" {
		return session.Header{}, false
	}
	return h, true
}

// stored is a session log of the store, read from its file at each query.
type stored struct {
	path   string
	header session.Header
}

func (s stored) ID() string             { return s.header.ID }
func (s stored) Header() session.Header { return s.header }

func (s stored) Events() ([]session.Event, error) {
	c, err := session.Read(s.path)
	if err != nil {
		return nil, err
	}
	return c.Events, nil
}
