# attack: write into the host's /dev/shm (a world-writable tmpfs outside every grant)
# needs: shm
echo escaped > "$SHM/shm-file"
