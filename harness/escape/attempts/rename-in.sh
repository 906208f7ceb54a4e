# attack: pull an outside file into the workspace by rename, removing it from outside
"$PROBE" rename "$TARGET" "$WS/stolen-raw"
mv "$TARGET" "$WS/stolen"
