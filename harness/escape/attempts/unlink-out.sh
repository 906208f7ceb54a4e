# attack: delete an outside file
rm -f "$TARGET"
