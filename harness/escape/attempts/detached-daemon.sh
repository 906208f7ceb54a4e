# attack: a detached grandchild (setsid, double fork) that writes outside after the sandboxed command has exited
# class: late
# settle: 1500ms
( setsid sh -c 'sleep 0.5; echo escaped >> "$TARGET"' </dev/null >/dev/null 2>&1 & )
exit 0
