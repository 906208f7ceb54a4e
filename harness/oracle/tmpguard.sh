#!/bin/bash
# usage: tmpguard.sh CMD...  — runs CMD, then removes the /tmp entries it made that did not exist before:
# dsh-subprocess-* and dsh-acp-snap-* (upstream's subprocess-local and our Go stack mkdtemp there) and node's
# addon loader and compile cache directories.
before=$(ls -d /tmp/dsh-subprocess-* /tmp/dsh-acp-snap-* /tmp/node-addon-native-custom-loader-* /tmp/node-compile-cache 2>/dev/null)
"$@"; rc=$?
for d in $(ls -d /tmp/dsh-subprocess-* /tmp/dsh-acp-snap-* /tmp/node-addon-native-custom-loader-* /tmp/node-compile-cache 2>/dev/null); do
  grep -qxF "$d" <<<"$before" || rm -rf -- "$d"
done
exit $rc
