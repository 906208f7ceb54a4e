# attack: remove an empty directory outside the workspace
rmdir "$OUT/empty-dir"
