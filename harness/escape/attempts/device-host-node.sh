# attack: write to a host block device (a loop device backed by an outside file) through its /dev node
# needs: root loopdev
# capability: CAP_SYS_ADMIN
dd if="$WS/inside.txt" of="$LOOPDEV" conv=notrunc,fsync 2>&1
