# attack: change the mode of an outside file
# class: metadata
chmod 0777 "$TARGET"
