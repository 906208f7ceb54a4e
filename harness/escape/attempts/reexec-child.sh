# attack: a child that re-execs itself three times before writing outside (does confinement survive execve?)
"$PROBE" reexec 3 "$TARGET"
