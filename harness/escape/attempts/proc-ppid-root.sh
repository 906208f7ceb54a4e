# attack: write through /proc/$PPID/root, the root of the process that started the command (bwrap's monitor, in the host's mount namespace, before the PID namespace)
echo escaped >> "/proc/$PPID/root$TARGET"
