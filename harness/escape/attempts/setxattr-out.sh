# attack: set an extended attribute on an outside file
# class: metadata
# effect: setxattr
"$PROBE" setxattr "$TARGET"
