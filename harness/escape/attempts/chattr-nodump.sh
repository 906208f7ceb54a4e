# attack: set the no-dump flag on an outside file the command owns (chattr +d; FS_IOC_SETFLAGS, no capability needed by the owner)
# class: metadata
# effect: chattr
"$PROBE" setflags "$TARGET" d
