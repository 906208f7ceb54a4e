// Package toolschema compares the schemas of the tools our stack composes
// with upstream's tool-schemas.expected.json, byte for byte in meaning and
// order: the model sees these texts, so a changed description, a parameter
// missing or added, or parameters in another key order is a mismatch naming
// the tool and the field. Tools of the sidecar the stack does not compose are
// named as not modelled; a tool the stack composes that the sidecar lacks is a
// mismatch.
//
// # Comparison
//
// Both sides are parsed into ordered trees (object keys keep their order;
// strings compare decoded, numbers by their text). Each difference is one
// line, "<tool>: <field path>: expected ..., got ..." with a key-order
// difference spelled as the two key lists.
//
// # Imports
//
// The standard library and package projection (its string diff detail).
package toolschema
