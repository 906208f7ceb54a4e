# attack: change the value of an extended attribute the outside file already has (user.dshsim, seeded "original")
# class: metadata
# effect: setxattr
"$PROBE" setxattr-as "$TARGET" user.dshsim changed
