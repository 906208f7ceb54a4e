package sandbox

import (
	"path/filepath"
	"strings"
)

// Isolation effects, the keys of [ConfinedArgv.Isolated].
const (
	// IsolatedSignal: the command cannot signal the harness.
	IsolatedSignal = "signal"
	// IsolatedAbstractUnix: the command cannot connect to an abstract unix
	// socket the harness listens on.
	IsolatedAbstractUnix = "abstract-unix"
	// IsolatedSecretEnv: the command starts without the environment's secrets.
	IsolatedSecretEnv = "secret-env"
	// IsolatedAgent: the command cannot trace the harness (the agent), read
	// or write its memory, or open its descriptors through /proc.
	IsolatedAgent = "agent"
	// IsolatedGitDir: the workspace's .git stays read-only under
	// workspace-write (bwrap; Landlock admits it cannot, see
	// [HardenedUngoverned]).
	IsolatedGitDir = "git-dir"
)

// Isolation lists what a backend's confinement keeps the command from
// beyond files, each "<effect>: <how>" ([ConfinedArgv.Isolated]), with and
// without the hardening; package sandbox/inproc reports Landlock's.
func Isolation(backend string, harden bool) []string {
	var out []string
	switch {
	case backend == BackendBwrap:
		out = append(out, IsolatedSignal+": the command runs in its own PID namespace, where the harness does not exist",
			IsolatedAgent+": the command runs in its own PID namespace, where the harness does not exist")
		if harden {
			out = append(out, IsolatedAbstractUnix+": landlock-run --scope inside bwrap (Landlock ABI 6)",
				IsolatedGitDir+": the workspace's .git is bound read-only under workspace-write (bwrap --ro-bind-try)")
		}
	case backend == BackendLandlock:
		out = append(out, IsolatedAgent+": the command runs in a Landlock domain, which may not trace a process outside it")
		if harden {
			out = append(out, IsolatedSignal+": Landlock scoping (ABI 6)", IsolatedAbstractUnix+": Landlock scoping (ABI 6)")
		}
	}
	if harden {
		out = append(out, IsolatedSecretEnv+": secret variables are removed from the command's environment (sandbox.ScrubSecrets)")
	}
	return out
}

// scopeFlag is the runner flag of the hardening: scope signals and abstract
// unix sockets (landlock-run --scope).
const scopeFlag = "--scope"

// HardenedBwrapArgs is the hardened bwrap profile for p (without "bwrap" and
// without the final "--"): [BwrapArgs]; under workspace-write the
// workspace's .git bound read-only over the writable workspace, when it
// exists (--ro-bind-try: hooks and config there run unconfined at the next
// git command, so Codex CLI protects them the same way); the runner bound
// read-only at its own path (a launcher under /tmp would be hidden by the
// tmpfs), then "--" and the runner with --scope and --rw / inside, which
// scopes the domain and adds no file rule (bwrap's mounts govern files;
// --rw / grants every right the runner grants anywhere). Pure.
func HardenedBwrapArgs(p Policy, launcher string) []string {
	args := BwrapArgs(p)
	if p.Mode == WorkspaceWrite {
		git := filepath.Join(p.WorkspaceRoot, ".git")
		args = append(args, "--ro-bind-try", git, git)
	}
	return append(args, "--ro-bind", launcher, launcher, "--", launcher, scopeFlag, "--rw", "/")
}

// HardenedUngoverned is what the hardening asks of a backend in mode that
// it admits it cannot do, each "<effect>: <why>", added to its Ungoverned
// list: under workspace-write Landlock (the runner and the in-process path)
// cannot keep the workspace's .git read-only, since a Landlock rule grants
// everything beneath its directory and no rule takes a right away beneath
// it. Pure.
func HardenedUngoverned(backend string, mode Mode) []string {
	if backend == BackendLandlock && mode == WorkspaceWrite {
		return []string{IsolatedGitDir + ": the workspace's .git stays writable under workspace-write: a Landlock grant covers everything beneath the workspace, and no rule narrows it below (bwrap binds .git read-only)"}
	}
	return nil
}

// HardenedLandlockArgs is the hardened runner profile for p: --scope, then
// [LandlockArgs]. Pure.
func HardenedLandlockArgs(p Policy) []string { return append([]string{scopeFlag}, LandlockArgs(p)...) }

// secretWords are the words (the parts of a name between underscores,
// upper-cased) that make an environment variable a secret.
var secretWords = map[string]bool{
	"TOKEN": true, "SECRET": true, "SECRETS": true, "PASSWORD": true, "PASSWD": true, "PASS": true,
	"PASSPHRASE": true, "KEY": true, "APIKEY": true, "CREDENTIAL": true, "CREDENTIALS": true,
	"AUTH": true, "COOKIE": true, "PRIVATE": true,
}

// secretNames are whole names that are secrets without a secret word.
var secretNames = map[string]bool{"KRB5CCNAME": true, "MYSQL_PWD": true, "PGPASSFILE": true}

// SecretName reports whether an environment variable named name counts as a
// secret, which the hardening keeps from a confined command: a name (upper-
// cased) listed in secretNames (KRB5CCNAME, MYSQL_PWD, PGPASSFILE), or one of
// whose underscore-separated words is TOKEN, SECRET(S), PASSWORD, PASSWD,
// PASS, PASSPHRASE, KEY, APIKEY, CREDENTIAL(S), AUTH, COOKIE or PRIVATE. So
// GITHUB_TOKEN, OPENAI_API_KEY, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN,
// DB_PASSWORD, SSH_AUTH_SOCK (the agent socket lends the user's keys) and
// GOOGLE_APPLICATION_CREDENTIALS are secrets; PATH, HOME, PWD, TERM, KEYMAP,
// TOKENIZER_PATH and PASSAGE are not (a word must match whole). Pure.
func SecretName(name string) bool {
	up := strings.ToUpper(name)
	if secretNames[up] {
		return true
	}
	for _, w := range strings.Split(up, "_") {
		if secretWords[w] {
			return true
		}
	}
	return false
}

// ScrubSecrets returns env ("NAME=value" entries) without the entries whose
// name [SecretName] counts as a secret, in order. An entry without "=" is
// judged by its whole text. Pure.
func ScrubSecrets(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !SecretName(name) {
			out = append(out, kv)
		}
	}
	return out
}
