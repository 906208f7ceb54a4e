# attack: symlink inside the workspace pointing at an outside directory, then create a file through it
ln -s "$OUT" "$WS/outdir"
echo escaped > "$WS/outdir/via-dir-link"
