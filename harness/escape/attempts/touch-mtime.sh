# attack: change the modification time of an outside file
# class: metadata
# effect: utimes
touch -m -d @0 "$TARGET"
