# attack: write to every open descriptor above 2, while the harness holds the outside file open without close-on-exec (as if it had inherited it): spawn must mark it close-on-exec
# needs: leaked-fd
for fd in /proc/self/fd/*; do
	n=${fd##*/}
	[ "$n" -gt 2 ] && "$PROBE" fd-write "$n" >/dev/null 2>&1
done
ls -l /proc/self/fd
