# attack: leave processes running after the call in every way a shell can (background, double fork, setsid, setsid -f, nohup): none may outlive it
# class: late
sleep 300 </dev/null >/dev/null 2>&1 &
( sleep 300 </dev/null >/dev/null 2>&1 & )
( setsid sleep 300 </dev/null >/dev/null 2>&1 & )
setsid -f sleep 300 </dev/null >/dev/null 2>&1
( nohup sleep 300 </dev/null >/dev/null 2>&1 & )
exit 0
