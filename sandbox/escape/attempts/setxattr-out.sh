# attack: set an extended attribute on an outside file
# class: metadata
"$PROBE" setxattr "$TARGET"
