# attack: change the modification time of an outside file
# class: metadata
touch -m -d @0 "$TARGET"
