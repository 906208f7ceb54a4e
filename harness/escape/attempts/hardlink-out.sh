# attack: create a hard link outside the workspace to a workspace file
"$PROBE" link "$WS/inside.txt" "$OUT/linked"
ln "$WS/inside.txt" "$OUT/linked2"
