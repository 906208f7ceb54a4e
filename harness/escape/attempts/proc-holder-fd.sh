# attack: reopen for writing a descriptor that an unconfined process of the same user holds on the outside file (/proc/PID/fd/N)
# needs: holder
"$PROBE" proc-fds "$HOLDER_PID"
