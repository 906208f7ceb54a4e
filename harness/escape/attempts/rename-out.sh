# attack: move a workspace file out of the workspace (raw rename, then mv with its copy fallback)
"$PROBE" rename "$WS/inside.txt" "$OUT/moved-raw"
mv "$WS/inside.txt" "$OUT/moved"
