// Package argschema checks a tool call's arguments against the tool's
// parameter schema, as upstream's generic validator does before every
// first-party tool body (dsh-tools' defineTool: validateJsonSchemaValue, then
// ToolArgsError "invalid arguments: <violations joined by "; ">",
// code INVALID_ARGS).
//
// # The subset
//
// A schema uses upstream's enforced JSON Schema subset: one scalar "type"
// (object, array, string, number, integer, boolean, null) or an exact-one
// "oneOf" of at least two schemas; "properties", "required" and a boolean
// "additionalProperties" on objects; "items" on arrays; type-correct scalar
// "enum" and "const"; the annotations description, title, default and
// examples. A schema with neither type nor oneOf accepts any JSON value. Any
// other keyword (minimum, pattern, minLength...) is refused by [Compile], as
// upstream refuses it when the tool is defined: there is no min/max rule.
//
// # The messages (VERBATIM)
//
// Paths are property names joined by "." and "[i]" for array items; the root
// is "arguments". Violations come in walk order: an object's missing
// required properties (in "required" order), then its properties' own
// violations (in "properties" order), then its undeclared properties (in the
// value's key order, only with additionalProperties: false):
//
//	missing required property "<path>"
//	"<path>" must be an object | an array | a string | a boolean | null | an integer
//	"<path>" must be a number            (not a number at all)
//	"<path>" must be a finite JSON number (-0; JSON text has no NaN or Infinity)
//	"<path>" must be one of <enum as JSON.stringify>
//	"<path>" must be <const as JSON.stringify>
//	"<path>" is not a declared property (additionalProperties: false)
//	"<path>" must match exactly one oneOf branch (matched <n>)
//
// A parameter root declares no additionalProperties, so an unknown top-level
// argument passes (upstream's implicit open parameter object). A JSON null
// is a present value: an optional string property given null fails.
//
// Values are read with internal/jsjson, so key order and duplicate keys are
// JavaScript's (a duplicate keeps its first position and last value).
//
// It imports internal/jsjson and the standard library; it must not import
// the pipeline or any tool (the pipeline wraps the violations in its coded
// error).
package argschema
