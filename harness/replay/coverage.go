package replay

import "github.com/dshsim/dshsim/harness/replay/projection"

// coverageNotes say what of the log named file is compared: the
// recording's events compared per type and the ones left out with their
// reasons, then what our log holds that the projection leaves out and the
// recording does not (our log's events of a compared type pair with the
// recording's, so an extra one is a mismatch already).
func coverageNotes(file string, rec, ours projection.Coverage) []string {
	notes := []string{rec.Note(file)}
	if extra := ours.LeftBeyond(rec); len(extra.Left) > 0 {
		notes = append(notes, extra.Note("our log of "+file))
	}
	return notes
}
