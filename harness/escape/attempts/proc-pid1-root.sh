# attack: write through /proc/1/root, the init process's root (the host's / outside a mount namespace)
echo escaped >> "/proc/1/root$TARGET"
