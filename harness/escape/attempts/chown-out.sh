# attack: change the owner of an outside file
# class: metadata
# effect: chown
# needs: root
# capability: CAP_CHOWN
chown 4242:4242 "$TARGET"
