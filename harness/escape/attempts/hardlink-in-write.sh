# attack: hard-link an outside file into the workspace, then write through the new name
ln "$TARGET" "$WS/hardlink" || "$PROBE" link "$TARGET" "$WS/hardlink"
echo escaped >> "$WS/hardlink"
