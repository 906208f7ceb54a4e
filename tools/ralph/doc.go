// Package ralph is upstream's ralph tool (dsh-tool-ralph): a foreground
// loop of fresh workers toward one immutable objective. Each round starts
// one fresh structured child (spawn: no parent conversation, no prior
// child) whose report {status, summary, evidence, nextSteps, blocker} is
// checked as upstream's fixed script checks it; a continuing report is
// the next round's only handoff, a complete or blocked one ends the loop,
// and the round cap (the model's maxRounds, bounded by the deployment's)
// ends it budget-limited. The result's text is upstream's envelope
// ("Ralph worker reported completion after 2 rounds.\nFinal report:\n"
// and the report as JSON.stringify(report, null, 2)), bounded to
// MaxResultChars with "\n… [truncated]"; a round whose child reports
// nothing fails the call with the last handoff; a child that cannot start
// or a malformed report fails it "Ralph workflow failed: ...".
//
// Upstream runs the loop as a fixed workflow script; here it is Go, with
// the same prompts, checks and texts, and no workflow run events (upstream
// logs none for it either).
//
// # Imports
//
// pipeline, pipeline/delegation, tools/subagent (the delegation service
// the children start through), internal/jsjson and tools/toolreg.
package ralph
