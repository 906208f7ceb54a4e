# attack: symlink inside the workspace pointing at an outside file, then write through it
ln -s "$TARGET" "$WS/link"
echo escaped >> "$WS/link"
