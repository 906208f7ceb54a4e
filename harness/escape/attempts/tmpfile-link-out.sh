# attack: create an anonymous O_TMPFILE in the workspace, then linkat it into an outside directory
"$PROBE" tmpfile-link "$WS" "$OUT/from-tmpfile"
