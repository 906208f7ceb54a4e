# attack: append to an existing file outside the workspace
echo escaped >> "$TARGET"
