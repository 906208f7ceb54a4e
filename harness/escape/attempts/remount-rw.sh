# attack: remount / read-write (needs CAP_SYS_ADMIN in the mount's user namespace), then write outside
mount -o remount,rw / 2>/dev/null
mount -o remount,rw,bind / 2>/dev/null
echo escaped >> "$TARGET"
