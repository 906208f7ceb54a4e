# attack: create a directory outside the workspace
mkdir "$OUT/new-dir"
