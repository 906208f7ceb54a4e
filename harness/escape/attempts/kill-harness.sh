# attack: signal the harness that started the command ($HARNESS_PID; SIGUSR1, which the harness traps, stands in for SIGKILL)
# class: isolation
# effect: signal
# needs: signal
kill -USR1 "$HARNESS_PID"
