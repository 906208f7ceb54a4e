# attack: write through a workspace name whose inode was hard-linked to an outside file before the call
# class: inode
# needs: prelink
echo escaped >> "$WS/prelinked"
