package stack

// Tools whose packages have not landed in this build. A replay that needs one
// fails with this reason instead of running the call against a missing tool.
// A tool builder that composes the tool marks it in composedTools.
func init() {
	const bash = "not composed in this build: the bash tool (internal/bashtool) has not landed"
	const fs = "not composed in this build: the file tools with observation (fsobserve/fstools) have not landed"
	missingTools["bash"] = bash
	missingTools["read"] = fs
	missingTools["write"] = fs
	missingTools["edit"] = fs
}
