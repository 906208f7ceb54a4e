package stack

// addWorkflow composes the workflow tool over rt (workflow.go).
func (s *Stack) addWorkflow(rt *subagents) error { return nil }
