package fsobserve

import (
	"fmt"
	"sync"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
)

// TestDecide: for each observation state, the write intent DecideWrite
// allows and the guard (or refusal) DecideEdit gives.
func TestDecide(t *testing.T) {
	cases := []struct {
		name      string
		owned     bool
		obs       Observation
		seen      bool
		wantWrite WriteIntent
		wantEdit  EditGuard
		editCode  string
		editMsg   string
	}{
		{"unobserved target may only be created and is refused as not observed for an edit", true, Observation{}, false,
			WriteIntent{Kind: CreateIfAbsent}, EditGuard{}, CodeNotObserved, `edit requires reading "/w/a.txt" first`},
		{"no owner may only create and is refused as not observed for an edit", false, Present("v7"), true,
			WriteIntent{Kind: CreateIfAbsent}, EditGuard{}, CodeNotObserved, `edit requires reading "/w/a.txt" first`},
		{"observed present replaces and guards at that version", true, Present("v7"), true,
			WriteIntent{Kind: ReplaceIfVersion, Version: "v7"}, EditGuard{Version: "v7"}, "", ""},
		{"observed absent may only be created and is refused as not found for an edit", true, Absent(), true,
			WriteIntent{Kind: CreateIfAbsent}, EditGuard{}, CodeNotFound, `cannot edit "/w/a.txt": not found`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := DecideWrite(c.owned, c.obs, c.seen); got != c.wantWrite {
				t.Errorf("DecideWrite = %+v, want %+v", got, c.wantWrite)
			}
			got, err := DecideEdit(c.owned, c.obs, c.seen, "/w/a.txt")
			if c.editCode == "" {
				if err != nil || got != c.wantEdit {
					t.Fatalf("DecideEdit = %+v, %v; want %+v, nil", got, err, c.wantEdit)
				}
				return
			}
			name, code, ok := pipeline.CodeOf(err)
			if !ok || name != ErrorName || code != c.editCode || err.Error() != c.editMsg {
				t.Fatalf("DecideEdit error = %q (%s/%s), want %q (%s/%s)", err, name, code, c.editMsg, ErrorName, c.editCode)
			}
		})
	}
}

func TestObservations(t *testing.T) {
	steps := []struct {
		name    string
		do      func(o *Observations)
		session string
		want    WriteIntent
		editErr string // code, "" = allowed
	}{
		{"fresh record authorizes nothing", func(*Observations) {}, "A", WriteIntent{Kind: CreateIfAbsent}, CodeNotObserved},
		{"read observation authorizes write at that version", func(o *Observations) { o.Record("A", "/k", Present("v1")) }, "A", WriteIntent{Kind: ReplaceIfVersion, Version: "v1"}, ""},
		{"write observation refreshes the basis without re-read", func(o *Observations) { o.Record("A", "/k", Present("v2")) }, "A", WriteIntent{Kind: ReplaceIfVersion, Version: "v2"}, ""},
		{"owner A's observation does not authorize owner B", func(*Observations) {}, "B", WriteIntent{Kind: CreateIfAbsent}, CodeNotObserved},
		{"each owner keeps its own version", func(o *Observations) { o.Record("B", "/k", Present("v9")) }, "B", WriteIntent{Kind: ReplaceIfVersion, Version: "v9"}, ""},
		{"present to absent", func(o *Observations) { o.Record("A", "/k", Absent()) }, "A", WriteIntent{Kind: CreateIfAbsent}, CodeNotFound},
		{"absent to present", func(o *Observations) { o.Record("A", "/k", Present("v3")) }, "A", WriteIntent{Kind: ReplaceIfVersion, Version: "v3"}, ""},
		{"no-owner observation records nothing", func(o *Observations) { o.Record("", "/k", Present("v4")) }, "", WriteIntent{Kind: CreateIfAbsent}, CodeNotObserved},
		{"forget drops one session", func(o *Observations) { o.Forget("A") }, "A", WriteIntent{Kind: CreateIfAbsent}, CodeNotObserved},
		{"B survives A's forget", func(*Observations) {}, "B", WriteIntent{Kind: ReplaceIfVersion, Version: "v9"}, ""},
		{"reset drops state", func(o *Observations) { o.Reset() }, "B", WriteIntent{Kind: CreateIfAbsent}, CodeNotObserved},
	}
	o := NewObservations()
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			s.do(o)
			if got := o.WriteIntent(s.session, "/k"); got != s.want {
				t.Fatalf("WriteIntent = %+v, want %+v", got, s.want)
			}
			_, err := o.EditIntent(s.session, "/k", "/d")
			_, code, _ := pipeline.CodeOf(err)
			if code != s.editErr || (err == nil) != (s.editErr == "") {
				t.Fatalf("EditIntent error = %v (code %q), want code %q", err, code, s.editErr)
			}
		})
	}
}

// TestObservationsConcurrentSessions: sessions record and look up at the
// same time (the tools of concurrent calls do), in their own session and in
// one they share, while another session is forgotten; each sees exactly
// what it recorded. Run with -race this fails
// the moment the record's mutex is left out; without -race the runtime's
// concurrent map check usually does.
func TestObservationsConcurrentSessions(t *testing.T) {
	o := NewObservations()
	const sessions, keys = 8, 300
	var wg sync.WaitGroup
	errs := make(chan string, sessions)
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				o.Record("gone", "/k", Present("x"))
				o.Forget("gone")
			}
		}
	}()
	for s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			session := fmt.Sprintf("s%d", s)
			for k := range keys {
				key := fmt.Sprintf("/k%d", k)
				version := fmt.Sprintf("v%d-%d", s, k)
				// Its own session, and one all of them share.
				for _, sess := range []string{session, "shared"} {
					k := key + "/" + session
					o.Record(sess, k, Present(version))
					if got := o.WriteIntent(sess, k); got != (WriteIntent{Kind: ReplaceIfVersion, Version: version}) {
						errs <- fmt.Sprintf("%s %s: WriteIntent %+v, want version %s", sess, k, got, version)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
