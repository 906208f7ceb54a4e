package sessionquery

import (
	"slices"

	"github.com/dshsim/dshsim/internal/jsjson"
	"github.com/dshsim/dshsim/pipeline/session"
)

// ours are the keys our stack writes into an event's data beside
// upstream's, by event type: the sandbox facts of a call's run (the
// backend that ran, what it cannot govern) on its tool/result and on a
// nested call's tool/code-dispatch. The log keeps them for its readers.
var ours = map[string]string{session.KindToolResult: "sandbox", session.KindCodeDispatch: "sandbox"}

// UpstreamView drops from record, one parsed event of type typ, the data
// key that is ours, if any, the rest in its order: what the model reads
// (session_event_read) and what a recording stores are events as upstream
// logs them.
func UpstreamView(typ string, record *jsjson.Value) {
	key, ok := ours[typ]
	d := record.Get("data")
	if !ok || d == nil || d.Kind != jsjson.Object {
		return
	}
	d.Members = slices.DeleteFunc(d.Members, func(m jsjson.Member) bool { return m.KeyString() == key })
}
