# attack: replace an outside file by renaming a workspace file over it
"$PROBE" rename "$WS/inside.txt" "$TARGET"
mv -f "$WS/inside.txt" "$TARGET"
