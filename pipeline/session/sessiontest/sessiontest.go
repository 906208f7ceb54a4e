package sessiontest

import (
	"path/filepath"
	"testing"

	"github.com/dshsim/dshsim/pipeline/session"
)

// New creates a session log with the header {ID: id, Cwd: cwd} in a fresh
// t.TempDir(), fails the test if it cannot, and closes the log when the test
// ends.
func New(t testing.TB, id, cwd string, opts ...session.Option) *session.Log {
	t.Helper()
	l, err := session.Create(filepath.Join(t.TempDir(), "session.jsonl"), session.Header{ID: id, Cwd: cwd}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// StartTurn appends turn/start {"turn":1} to l, opening the turn that
// approval asks inside, and fails the test if it cannot.
func StartTurn(t testing.TB, l *session.Log) {
	t.Helper()
	if _, err := l.Append(session.KindTurnStart, session.TurnStart{Turn: 1}); err != nil {
		t.Fatal(err)
	}
}
