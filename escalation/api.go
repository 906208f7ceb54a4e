package escalation

import (
	"context"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
)

// Request is one escalation request of one call.
type Request struct {
	// Requested is the mode asked for in sandbox_permissions.
	Requested sandbox.Mode
	// Justification is the model's sentence, passed untrimmed to the approver.
	Justification string
	// Effective is the standing mode of this call.
	Effective sandbox.Mode
	// Subject is "command" (bash) or "operation" (fs tools).
	Subject string
}

// Func approves one escalation for one call and returns the granted mode, or a
// model-facing error; nothing has run when it returns an error. The bash and
// file tools receive one injected, so they do not depend on how approval is
// composed.
type Func func(ctx context.Context, call *pipeline.Call, req Request) (sandbox.Mode, error)
