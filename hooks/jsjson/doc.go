// Package jsjson reads and writes JSON the way JavaScript's JSON.parse and
// JSON.stringify do, where that differs from encoding/json and the bytes
// matter (a hook's stdin is compared byte for byte with upstream's).
//
// The differences it keeps:
//
//   - object key order: integer-like keys ("0", "7", up to 2³²−2) first in
//     ascending order, then the other keys in first-insertion order; a
//     duplicate key keeps its first position and takes the last value;
//   - strings: no HTML escaping, U+2028/U+2029 raw, control characters as
//     \b \f \n \r \t or lower-case \u00xx, lone surrogates kept (as
//     WTF-8 inside Go strings) and written as lower-case \udxxx;
//   - numbers: JavaScript's Number-to-String (1e+21, 1.5e-7, -0 → 0,
//     1.0 → 1), and a non-finite number (1e400 parses to Infinity) → null.
//
// [Parse] also records each value's byte offset, so a caller can name the
// line of a bad field. It imports nothing of this repository.
package jsjson
