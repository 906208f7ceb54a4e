# attack: set a trusted.* extended attribute on an outside file (needs CAP_SYS_ADMIN)
# class: metadata
# effect: setxattr
# needs: root
# capability: CAP_SYS_ADMIN
"$PROBE" setxattr-as "$TARGET" trusted.dshsim escaped
