package sandbox

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSecretName is the rule's table: a listed name, or a name with a
// secret word between underscores; a word must match whole.
func TestSecretName(t *testing.T) {
	secret := []string{"GITHUB_TOKEN", "GH_TOKEN", "OPENAI_API_KEY", "DEEPSEEK_API_KEY", "ANTHROPIC_API_KEY",
		"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "DB_PASSWORD", "PGPASSWORD_X_PASS", "SSH_AUTH_SOCK",
		"GOOGLE_APPLICATION_CREDENTIALS", "NPM_CONFIG__AUTH", "STRIPE_APIKEY", "GPG_PASSPHRASE", "SESSION_COOKIE",
		"SIGNING_PRIVATE", "KRB5CCNAME", "MYSQL_PWD", "PGPASSFILE", "github_token", "Secret", "TOKEN",
		"DSHSIM_ESCAPE_API_KEY"}
	public := []string{"PATH", "HOME", "PWD", "OLDPWD", "TERM", "LANG", "SHELL", "USER", "KEYMAP", "XKB_KEYMAP",
		"TOKENIZER_PATH", "PASSAGE", "SECRETARY", "AUTHOR", "GOPATH", "SSH_CONNECTION", "XDG_SESSION_ID",
		"HISTCONTROL", "MONKEY", "", "PASSWORDS_FILE_X"}
	for _, n := range secret {
		if !SecretName(n) {
			t.Errorf("SecretName(%q) = false, want true", n)
		}
	}
	for _, n := range public {
		if SecretName(n) {
			t.Errorf("SecretName(%q) = true, want false", n)
		}
	}
}

func TestScrubSecrets(t *testing.T) {
	env := []string{"PATH=/bin", "GITHUB_TOKEN=ghp_x", "HOME=/h", "OPENAI_API_KEY=sk", "WEIRD", "AUTH", "LANG=C"}
	want := []string{"PATH=/bin", "HOME=/h", "WEIRD", "LANG=C"}
	if d := cmp.Diff(want, ScrubSecrets(env)); d != "" {
		t.Errorf("ScrubSecrets (-want +got):\n%s", d)
	}
	if got := ScrubSecrets(nil); got == nil || len(got) != 0 {
		t.Errorf("ScrubSecrets(nil) = %#v, want an empty, non-nil environment (nil would inherit everything)", got)
	}
}

// TestHardenedGitDir: the hardened bwrap profile binds the workspace's
// .git read-only, by the descriptor after the workspace's, under
// workspace-write only and only when it was opened, and Landlock's hardened
// report admits, under workspace-write only, that it cannot.
func TestHardenedGitDir(t *testing.T) {
	ww := strings.Join(HardenedBwrapArgs(Policy{Mode: WorkspaceWrite, WorkspaceRoot: "/ws"}, "/l/run", true), " ")
	noGit := strings.Join(HardenedBwrapArgs(Policy{Mode: WorkspaceWrite, WorkspaceRoot: "/ws"}, "/l/run", false), " ")
	ro := strings.Join(HardenedBwrapArgs(Policy{Mode: ReadOnly, WorkspaceRoot: "/ws"}, "/l/run", true), " ")
	bind := "--bind-fd 4 /ws --ro-bind-fd 5 /ws/.git --ro-bind /l/run"
	if !strings.Contains(ww, bind) || !strings.Contains(noGit, "--bind-fd 4 /ws --ro-bind /l/run") || strings.Contains(ro, "-fd") {
		t.Errorf("hardened bwrap: ww %q, without .git %q, ro %q; want .git bound read-only after the workspace under workspace-write only, when it was opened", ww, noGit, ro)
	}
	for _, tc := range []struct {
		backend string
		mode    Mode
		want    int
	}{{BackendLandlock, WorkspaceWrite, 1}, {BackendLandlock, ReadOnly, 0}, {BackendBwrap, WorkspaceWrite, 0}} {
		got := HardenedUngoverned(tc.backend, tc.mode)
		if len(got) != tc.want || tc.want == 1 && !strings.HasPrefix(got[0], IsolatedGitDir+": ") {
			t.Errorf("HardenedUngoverned(%s, %s) = %q, want %d git-dir entries", tc.backend, tc.mode, got, tc.want)
		}
	}
}
