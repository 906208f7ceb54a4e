# attack: create a FIFO outside the workspace
mkfifo "$OUT/fifo"
