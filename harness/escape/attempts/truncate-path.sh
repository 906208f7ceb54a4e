# attack: truncate(2) an outside file by path, without opening it for writing
# class: truncate
"$PROBE" truncate "$TARGET"
truncate -s 0 "$TARGET"
