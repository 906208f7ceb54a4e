# attack: read and overwrite a secret in the harness's memory with process_vm_readv and process_vm_writev, through every thread
# class: isolation
# effect: agent
# needs: agent
"$PROBE" agent-vm "$HARNESS_PID" "$HARNESS_CANARY" "$HARNESS_CANARY_LEN"
