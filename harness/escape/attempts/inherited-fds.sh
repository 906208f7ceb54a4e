# attack: write to every open descriptor above 2 in case the executor leaked an open outside file (it holds one, close-on-exec)
# needs: cloexec-fd
for fd in /proc/self/fd/*; do
	n=${fd##*/}
	[ "$n" -gt 2 ] && "$PROBE" fd-write "$n" >/dev/null 2>&1
done
ls -l /proc/self/fd
