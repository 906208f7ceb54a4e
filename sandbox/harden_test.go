package sandbox

import (
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
