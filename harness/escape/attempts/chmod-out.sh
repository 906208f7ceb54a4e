# attack: change the mode of an outside file
# class: metadata
# effect: chmod
chmod 0777 "$TARGET"
