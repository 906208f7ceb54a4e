package subagent

import (
	"context"
	"encoding/json"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/pipeline/delegation"
	"github.com/dshsim/dshsim/tools/toolreg"
)

// The structured-output tool of a child with an output schema (VERBATIM,
// upstream's subagent in-process driver).
const (
	StructuredName        = delegation.StructuredOutputTool
	StructuredDescription = "Report your final structured result. Call this exactly once, when your answer is complete; the arguments must match this tool's parameter schema exactly."
	// StructuredSection is the child's tool:structured_output prompt
	// section, at StructuredSectionOrder (the end of the tool-guidance band).
	StructuredSection      = "When you have your final answer, you MUST report it by calling the `structured_output` tool with arguments matching its parameter schema exactly. Do not finish with a plain text answer: only the tool call counts as your result."
	StructuredSectionOrder = 190
	// StructuredText is the result's text.
	StructuredText = "Structured output recorded."
)

// structuredValueSchema is the tool's output schema: {recorded: true}.
var structuredValueSchema = json.RawMessage(`{"type":"object","properties":{"recorded":{"type":"boolean","const":true}},"required":["recorded"],"additionalProperties":false}`)

// Structured is the structured_output tool a child with an output schema
// gets in its own scope: its parameters are the schema (the pipeline's
// schema check validates the arguments), and a call that passes records
// {recorded: true} and concludes the child's turn. What it recorded is read
// from the child's log once its result is final
// ([delegation.StructuredCapture]).
func Structured(schema json.RawMessage) toolreg.Tool {
	return toolreg.Tool{
		Def: pipeline.Tool{Name: StructuredName, Description: StructuredDescription, Parameters: schema, ArgsRoot: "value", OutputSchema: structuredValueSchema,
			Run: func(context.Context, *pipeline.Call) (pipeline.Output, error) {
				return pipeline.Output{Value: json.RawMessage(`{"recorded":true}`), Content: []pipeline.Block{pipeline.TextBlock(StructuredText)}, ConcludesTurn: true}, nil
			}},
		Section: &toolreg.Section{Name: "tool:" + StructuredName, Order: StructuredSectionOrder, Text: StructuredSection},
	}
}

// StructuredRefusal is the guard's denial of a call made after the child
// recorded its structured result (VERBATIM).
func StructuredRefusal(name string) string {
	return "structured output already recorded: the run is complete, so `" + name + "` is not executed"
}
