# attack: write through /proc/self/root, the process's view of /
echo escaped >> "/proc/self/root$TARGET"
