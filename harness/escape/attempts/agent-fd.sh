# attack: write into a pipe the harness reads, reopened through /proc/<pid>/task/<tid>/fd of every thread (a forged answer on the agent's stdin)
# class: isolation
# effect: agent
# needs: agent
"$PROBE" agent-fd "$HARNESS_PID" "$HARNESS_FD"
