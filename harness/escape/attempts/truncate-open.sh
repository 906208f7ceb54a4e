# attack: empty an outside file by opening it with O_TRUNC and writing nothing
: > "$TARGET"
