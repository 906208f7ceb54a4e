# attack: swap a workspace symlink between an inside file and an outside file while appending through it (check/use race, 300ms)
touch "$WS/real"
"$PROBE" swap-race "$WS/swap" "$WS/real" "$TARGET"
