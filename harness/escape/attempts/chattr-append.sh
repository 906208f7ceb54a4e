# attack: make an outside file append-only (chattr +a; FS_IOC_SETFLAGS needs CAP_LINUX_IMMUTABLE)
# class: metadata
# effect: chattr
# needs: root
"$PROBE" setflags "$TARGET" a
