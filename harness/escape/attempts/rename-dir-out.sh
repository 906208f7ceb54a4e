# attack: move a whole workspace directory out of the workspace
"$PROBE" rename "$WS/sub" "$OUT/sub-raw"
mv "$WS/sub" "$OUT/sub"
