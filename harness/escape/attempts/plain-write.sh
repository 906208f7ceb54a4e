# attack: create a new file outside the workspace with a shell redirection
echo escaped > "$OUT/new-file"
