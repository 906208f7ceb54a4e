# attack: plant a symlink outside the workspace (make_sym outside)
ln -s "$WS/inside.txt" "$OUT/planted-link"
