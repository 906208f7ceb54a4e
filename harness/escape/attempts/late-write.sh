# attack: a detached writer (its own session, its parent gone) that writes outside and in the workspace after the call returned: an escalated call's grant must end with the call
# class: late
# settle: 1500ms
( setsid sh -c 'sleep 0.5; echo late >> "$TARGET"; echo late > "$WS/late"' </dev/null >/dev/null 2>&1 & )
exit 0
