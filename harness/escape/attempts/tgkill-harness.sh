# attack: signal every thread of the harness that started the command (tgkill; SIGUSR1, which the harness traps, stands in for SIGKILL)
# class: isolation
# effect: signal
# needs: signal
"$PROBE" tgkill "$HARNESS_PID"
