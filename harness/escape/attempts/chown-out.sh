# attack: change the owner of an outside file
# class: metadata
# effect: chown
# needs: root
chown 4242:4242 "$TARGET"
