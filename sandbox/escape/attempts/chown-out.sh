# attack: change the owner of an outside file
# class: metadata
# needs: root
chown 4242:4242 "$TARGET"
