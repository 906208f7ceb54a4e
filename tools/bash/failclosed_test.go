package bash

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dshsim/dshsim/pipeline"
	"github.com/dshsim/dshsim/sandbox"
)

// A foreground call whose timeout expires while the provider is still
// selecting a backend must still fail closed with SANDBOX_UNAVAILABLE when no
// backend is usable: the refusal is not a timeout. The provider is real and
// probes real processes: a Landlock launcher that takes a while to say it is
// unusable (exit 125, a second after the 200ms deadline) and sandbox-exec,
// which Linux does not have.
func TestUnavailableSandboxIsNotReportedAsATimeout(t *testing.T) {
	ws := t.TempDir()
	slow := filepath.Join(ws, "slow-unusable-launcher")
	if err := os.WriteFile(slow, []byte("#!/bin/sh\nsleep 1\necho 'landlock-run: landlock is not enforced by this kernel (ABI unsupported or disabled)' >&2\nexit 125\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(ws, "ran")
	p := provider(t, sandbox.Config{Chain: []string{sandbox.BackendLandlock, sandbox.BackendSeatbelt}, LauncherPath: slow})
	tool := newTool(t, Config{}, Deps{Policy: fixedPolicy(sandbox.WorkspaceWrite, ws), Confiner: p})
	got, err := run(t, tool, call(agent(t, "s", ws), cmd("touch "+marker, "timeoutMs", 200)))
	if !pipeline.HasCode(err, sandbox.ErrorCode) {
		t.Errorf("got %q, err = %v; want the %s error", got, err, sandbox.ErrorCode)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran")
	}
}
