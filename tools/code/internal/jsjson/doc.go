// Package jsjson is JSON as JavaScript sees it, for run_code: an iterative
// parser with JSON.parse's semantics (members in JavaScript's own-key order,
// a repeated key keeps its first place and its last value, strings keep their
// UTF-16 code units, so a lone surrogate survives), and the exact text JSON.stringify and
// Number.prototype.toString produce, with their byte sizes.
//
// Go's encoding/json is not used for these texts: it escapes <, > and &,
// U+2028 and U+2029, sorts map keys and formats numbers differently.
//
// It imports only the standard library; it must not import anything in this
// repository.
package jsjson
