// Package jsjson reads and writes JSON the way JavaScript's JSON.parse and
// JSON.stringify do, where that differs from encoding/json and the bytes
// matter: a hook's stdin is compared byte for byte with upstream's, an event
// is printed as session_event_read prints it, and run_code's values, SDK
// declarations and output sizes are what the program's JavaScript sees.
//
// The differences it keeps:
//
//   - object key order: integer-like keys ("0", "7", up to 2³²−2) first in
//     ascending order, then the other keys in first-insertion order; a
//     duplicate key keeps its first position and takes the last value;
//   - strings: held as UTF-16 code units, so a lone surrogate survives and
//     is written as lower-case \udxxx; no HTML escaping, U+2028/U+2029 raw,
//     control characters as \b \f \n \r \t or lower-case \u00xx;
//   - numbers: JavaScript's Number-to-String (1e+21, 1.5e-7, -0 → 0,
//     1.0 → 1), and a non-finite number (1e400 parses to Infinity) → null;
//   - indentation: JSON.stringify(v, null, indent), or indented only down to
//     a depth (run_code's rendering of a returned value).
//
// [Parse] records each value's byte offset, so a caller can name the line
// of a bad field; it and the writers are iterative, so deep nesting costs no
// Go stack.
//
// It imports only the standard library; it must not import anything in this
// repository.
//
// [Marshal] writes a Go value as encoding/json does but, like JSON.stringify,
// leaves <, > and & unescaped.
//
// [IsSpace] and [Trim] are JavaScript's whitespace (\s, String.prototype.trim),
// which hooks, the SDK declarations and the session search share.
package jsjson
