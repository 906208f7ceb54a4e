# attack: create a character device node outside the workspace
# needs: root
# capability: CAP_MKNOD
mknod "$OUT/node" c 1 3
