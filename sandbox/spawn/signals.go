package spawn

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// inheritable are the signals a process can be started ignoring (nohup's
// SIGHUP, a non-interactive shell's SIGINT and SIGQUIT for a background
// command) and that this process may catch instead.
var inheritable = []os.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGPIPE,
	syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU}

var resetOnce sync.Once

// resetIgnoredSignals makes every command start with the signals this
// process ignores at their default action, as Node's spawn (libuv) starts
// its children: an ignored signal stays ignored across exec, so under a
// harness started with nohup `kill -HUP $$` would not end the command, where
// upstream reports it killed by SIGHUP. A caught signal is reset by exec, so
// this process catches the ignored ones instead, into a channel nobody
// reads: for this process they stay as good as ignored.
func resetIgnoredSignals() {
	resetOnce.Do(func() {
		var ignored []os.Signal
		for _, s := range inheritable {
			if signal.Ignored(s) {
				ignored = append(ignored, s)
			}
		}
		if len(ignored) > 0 {
			signal.Notify(make(chan os.Signal, 1), ignored...)
		}
	})
}
