# attack: create a character device node outside the workspace
# needs: root
mknod "$OUT/node" c 1 3
