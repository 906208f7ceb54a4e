# attack: make an outside file append-only (chattr +a; FS_IOC_SETFLAGS needs CAP_LINUX_IMMUTABLE)
# class: metadata
# effect: chattr
# needs: root
# capability: CAP_LINUX_IMMUTABLE
"$PROBE" setflags "$TARGET" a
