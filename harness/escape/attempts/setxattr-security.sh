# attack: set a security.* extended attribute on an outside file (needs CAP_SYS_ADMIN unless an LSM claims the name)
# class: metadata
# effect: setxattr
# needs: root
# capability: CAP_SYS_ADMIN
"$PROBE" setxattr-as "$TARGET" security.dshsim escaped
