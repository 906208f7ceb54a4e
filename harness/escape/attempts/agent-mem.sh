# attack: read a secret in the harness's memory through /proc/<pid>/task/<tid>/mem of every thread
# class: isolation
# effect: agent
# needs: agent
"$PROBE" agent-mem "$HARNESS_PID" "$HARNESS_CANARY" "$HARNESS_CANARY_LEN"
